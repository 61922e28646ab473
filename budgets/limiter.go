package budgets

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Limiter is a concurrency limit: the permits a budget's calls hold while
// they are in flight. A Config gives its budget one (nil: no concurrency
// limit); a budget waits for a permit before each call and gives it back,
// with the call's Outcome, when the call ends. The implementations are this
// package's:
//
//   - Fixed(n): a Pool of n permits for one budget (a count read from
//     configuration: an n below 1 fails the Config's validation);
//   - NewPool(n): a Pool of n permits that several budgets share (strategy
//     C3: one pool for every call, a rate limit per dependency);
//   - NewAdaptive(alg): an Adaptive limit that an AIMD or a Vegas algorithm
//     moves after every call (strategy C5).
//
// A budget asks its limiter what it needs (whether the calls' round-trip
// times feed it, whether its limit moves and so has a gauge) and never which
// kind it is. Every Limiter is safe for concurrent use.
type Limiter interface {
	// Limit is how many calls may be in flight now.
	Limit() int
	// InUse is how many permits are held now, by every budget given the
	// limiter (it may exceed Limit right after a moving limit fell).
	InUse() int

	// validate names the first reason the limiter cannot be used, in a
	// Config's "field: message" style.
	validate() error
	// acquire waits for a permit until ctx ends; it returns the permits
	// held once it holds its own (itself included), or ctx.Err() holding
	// nothing.
	acquire(ctx context.Context) (inFlight int, err error)
	// release gives a permit back with its call's outcome; judged is false
	// for a call that was not the dependency's to judge (the caller's
	// context ended), whose outcome must not move the limit.
	release(o Outcome, judged bool)
	// timesRTT reports whether the outcomes given to release need the time
	// from the request written to the first response byte; otherwise their
	// RTT is the call's own time.
	timesRTT() bool
	// watch calls f with the limit now and with every new limit after, if
	// the limit can move; a limit that never moves never calls f.
	watch(f func(limit int))
}

// Pool is a fixed number of permits that one or more budgets draw from:
// together they never have more calls in flight than the pool holds, while
// each keeps its own rate limit, deadlines and metrics. Give one budget a
// pool of its own (Fixed), or give several budgets the same *Pool (NewPool)
// to share one.
//
// Permits are handed out first come, first served. A Pool is safe for
// concurrent use. The zero Pool holds no permits and cannot be used: a
// Config holding it fails validation.
type Pool struct {
	size int
	sem  *semaphore.Weighted // nil: no permits (the zero Pool, Fixed(n < 1))
	held atomic.Int64
}

// NewPool returns a pool of permits permits, for budgets to share. It
// panics if permits < 1: a pool that can never admit a call is a
// programming error, not a configuration to run (for a count read from
// configuration, use Fixed, which a Config's validation checks).
func NewPool(permits int) *Pool {
	if permits < 1 {
		panic(fmt.Sprintf("budgets: NewPool(%d): a pool needs at least 1 permit", permits))
	}
	return &Pool{size: permits, sem: semaphore.NewWeighted(int64(permits))}
}

// Fixed returns a pool of limit permits for one budget: the budget's own
// fixed concurrency limit. Unlike NewPool it does not panic: with limit < 1
// it returns a pool that admits nothing, and a Config holding it fails
// validation naming the field limit.
func Fixed(limit int) *Pool {
	if limit < 1 {
		return &Pool{size: limit}
	}
	return NewPool(limit)
}

// Limit returns how many permits the pool holds.
func (p *Pool) Limit() int { return p.size }

// InUse returns how many permits are held now, by every budget drawing
// from the pool; it is never more than Limit.
func (p *Pool) InUse() int { return int(p.held.Load()) }

func (p *Pool) validate() error {
	switch {
	case p == nil:
		return errors.New("limit: a nil *Pool (a nil Limiter means no concurrency limit)")
	case p.sem == nil:
		return fmt.Errorf("limit: %d must be ≥ 1 (make a pool with Fixed or NewPool)", p.size)
	}
	return nil
}

// acquire takes one permit, blocking until one is free or ctx is done. On
// failure it returns ctx.Err() and leaves the pool unchanged.
func (p *Pool) acquire(ctx context.Context) (int, error) {
	if err := p.sem.Acquire(ctx, 1); err != nil {
		return 0, err
	}
	return int(p.held.Add(1)), nil
}

// release returns one permit; a fixed limit ignores the outcome. It panics
// if the pool has none out: a permit released twice would let one call too
// many in flight.
func (p *Pool) release(Outcome, bool) {
	if p.held.Add(-1) < 0 {
		panic("budgets: pool: released more permits than held")
	}
	p.sem.Release(1)
}

func (p *Pool) timesRTT() bool { return false }

func (p *Pool) watch(func(int)) {}
