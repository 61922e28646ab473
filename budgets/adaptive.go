package budgets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// AIMD is the loss-based adaptive concurrency limit of Netflix's
// concurrency-limits (AIMDLimit.\_update): after each call, when the call
// was dropped — for us a rejection (503/429) or a call timeout — the limit
// becomes ⌊limit × Backoff⌋; otherwise, when the limit was in use (the
// calls in flight as the call was sent, times 2, reach the limit), it grows
// by 1; the result is kept within [Floor, Ceiling]. The library's defaults
// (floor 20, ceiling 200) are above the lab's whole system of record (6
// workers + 6 queue slots), so loadlab has none: the floor and ceiling come
// from the dependency (loadlab probe and advise give its knee and first
// rejection).
type AIMD struct {
	// Initial is the limit at the start (in [Floor, Ceiling]).
	Initial int `json:"initial" yaml:"initial"`
	// Floor and Ceiling bound the limit (1 ≤ Floor ≤ Ceiling).
	Floor   int `json:"floor" yaml:"floor"`
	Ceiling int `json:"ceiling" yaml:"ceiling"`
	// Backoff multiplies the limit on a drop, in (0, 1) (Netflix: 0.9).
	Backoff float64 `json:"backoff" yaml:"backoff"`
}

// DefaultAIMDBackoff is Netflix AIMDLimit's backoff ratio.
const DefaultAIMDBackoff = 0.9

// Validate names the first bad field.
func (a AIMD) Validate() error {
	switch {
	case a.Floor < 1:
		return fmt.Errorf("floor: %d must be ≥ 1", a.Floor)
	case a.Ceiling < a.Floor:
		return fmt.Errorf("ceiling: %d must be ≥ the floor, %d", a.Ceiling, a.Floor)
	case a.Initial < a.Floor || a.Initial > a.Ceiling:
		return fmt.Errorf("initial: %d must be in [floor %d, ceiling %d]", a.Initial, a.Floor, a.Ceiling)
	case !(a.Backoff > 0 && a.Backoff < 1):
		return fmt.Errorf("backoff: %v must be in (0, 1)", a.Backoff)
	}
	return nil
}

// Update is the next limit after a call sent with inFlight calls in flight
// (itself included) that was dropped or not: the published rule, pure.
func (a AIMD) Update(limit, inFlight int, dropped bool) int {
	switch {
	case dropped:
		limit = int(float64(limit) * a.Backoff)
	case inFlight*2 >= limit:
		limit++
	}
	return min(a.Ceiling, max(a.Floor, limit))
}

func (a AIMD) start() int { return a.Initial }

func (a AIMD) rule() rule { return aimdRule(a) }

// usesRTT: the AIMD rule reads drops and calls in flight, not times.
func (a AIMD) usesRTT() bool { return false }

type aimdRule AIMD

func (r aimdRule) next(limit int, o Outcome) int { return AIMD(r).Update(limit, o.InFlight, o.Dropped) }

// Algorithm moves an adaptive limit: AIMD or Vegas.
type Algorithm interface {
	// Validate names the first bad field.
	Validate() error
	start() int
	rule() rule
	// usesRTT reports whether the rule reads the outcomes' RTT.
	usesRTT() bool
}

// rule is an algorithm's running state: the next limit after each call.
type rule interface {
	next(limit int, o Outcome) int
}

// Outcome is one judged call as an algorithm sees it.
type Outcome struct {
	// InFlight is the calls in flight as it was sent (itself included).
	InFlight int
	// Dropped: it was rejected (503/429) or timed out.
	Dropped bool
	// RTT is the time from the request written to the first response
	// byte when the algorithm uses it (for a call that did no HTTP, and
	// for an algorithm that does not, the call's time); 0 for a drop.
	RTT time.Duration
}

// Adaptive is a concurrency limit that an algorithm moves after every call:
// a pool of permits whose size changes. Callers wait first come, first
// served; when the limit falls below the calls in flight, no caller is let
// in until enough have ended. It is safe for concurrent use. Make one with
// NewAdaptive and give it to a Config as its Limiter; a budget reports each
// call's outcome to it when the call ends, and its limit is the budget's
// gauge loadlab_client_limit. Given to several budgets, it is one limit
// that all their calls move. The zero Adaptive cannot be used: a Config
// holding it fails validation.
type Adaptive struct {
	alg  Algorithm
	rule rule

	mu      sync.Mutex
	limit   int
	inUse   int
	waiters []chan struct{} // FIFO; a closed channel is a granted permit
	// watchers are told each new limit (the gauges of the budgets given it).
	watchers []func(int)
}

// NewAdaptive returns an adaptive limit run by alg (an AIMD or a Vegas),
// starting at its Initial, or an error naming alg's bad field.
func NewAdaptive(alg Algorithm) (*Adaptive, error) {
	if err := alg.Validate(); err != nil {
		return nil, err
	}
	return &Adaptive{alg: alg, rule: alg.rule(), limit: alg.start()}, nil
}

// Limit is the limit now.
func (a *Adaptive) Limit() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

// InUse is how many permits are held now (it may exceed Limit right after
// the limit fell).
func (a *Adaptive) InUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inUse
}

func (a *Adaptive) validate() error {
	if a == nil || a.alg == nil {
		return errors.New("adaptive: an Adaptive with no algorithm (make one with NewAdaptive)")
	}
	if err := a.alg.Validate(); err != nil {
		return fmt.Errorf("adaptive: %w (make it with NewAdaptive)", err)
	}
	return nil
}

func (a *Adaptive) timesRTT() bool { return a.alg.usesRTT() }

// watch adds f to be told every new limit, and tells it the current one
// now. f runs with the limit's lock held: it must not call back into a.
func (a *Adaptive) watch(f func(int)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchers = append(a.watchers, f)
	f(a.limit)
}

// acquire waits for a permit under the current limit until ctx ends; it
// returns the calls in flight once it holds its permit (itself included).
func (a *Adaptive) acquire(ctx context.Context) (int, error) {
	a.mu.Lock()
	if len(a.waiters) == 0 && a.inUse < a.limit {
		a.inUse++
		n := a.inUse
		a.mu.Unlock()
		return n, nil
	}
	ch := make(chan struct{})
	a.waiters = append(a.waiters, ch)
	a.mu.Unlock()
	select {
	case <-ch:
		a.mu.Lock()
		n := a.inUse
		a.mu.Unlock()
		return n, nil
	case <-ctx.Done():
		a.mu.Lock()
		defer a.mu.Unlock()
		select {
		case <-ch: // granted as ctx ended: give the permit back
			a.inUse--
			a.grantLocked()
		default:
			for i, w := range a.waiters {
				if w == ch {
					a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
					break
				}
			}
		}
		return 0, ctx.Err()
	}
}

// release returns a permit, telling the algorithm its call's outcome. A
// call that was not the dependency's to judge (the run was interrupted)
// passes judged false: the limit does not move.
func (a *Adaptive) release(o Outcome, judged bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inUse <= 0 {
		panic("budgets: adaptive: released more permits than held")
	}
	a.inUse--
	if judged {
		if next := a.rule.next(a.limit, o); next != a.limit {
			a.limit = next
			for _, f := range a.watchers {
				f(next)
			}
		}
	}
	a.grantLocked()
}

// grantLocked lets waiters in, first come first served, while the limit
// allows.
func (a *Adaptive) grantLocked() {
	for len(a.waiters) > 0 && a.inUse < a.limit {
		a.inUse++
		close(a.waiters[0])
		a.waiters = a.waiters[1:]
	}
}
