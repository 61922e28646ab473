// Package budgets guards outbound calls with per-dependency budgets: a
// concurrency limit (a Limiter's permits), an optional rate limit, and two
// separate deadlines — how long a caller may wait before its call (for a
// rate token, then a permit: one permit timeout bounds both), and how long
// the call itself may take, counted only from the moment the permit is
// held, so local queueing never eats the call's time. No permit is held
// while waiting for a token.
//
// A Config says the whole of a budget, and New fixes it: a budget does not
// change once made. Every call ends in exactly one Class, judged by the
// Config's statuses, and is recorded, with its waits and latency, in the
// Metrics of the dependency it went to. One Budget may guard several
// dependencies; several budgets may draw from one Pool of permits, each
// with its own rate limit; an Adaptive limit moves with its calls'
// outcomes. Metrics stay per dependency.
package budgets

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptrace"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// Class is how a call ended.
type Class string

const (
	// OK: the dependency answered with a success status (by default 2xx).
	OK Class = "ok"
	// Rejected: the dependency refused at its door: a rejection status (by
	// default HTTP 503 or 429).
	Rejected Class = "rejected"
	// CallTimeout: the call took longer than the call timeout.
	CallTimeout Class = "call_timeout"
	// PermitTimeout: the caller had its rate token (or the budget has no
	// rate limit) but no permit before the permit timeout ran out; the call
	// was never made, and the token is spent.
	PermitTimeout Class = "permit_timeout"
	// RateTimeout: no rate token could be had before the permit timeout ran
	// out; the caller waited the whole permit timeout without holding a
	// permit, and the call was never made.
	RateTimeout Class = "rate_timeout"
	// Error: a transport error, another status, or the caller's context
	// ended.
	Error Class = "error"
)

// Classes lists every Class in a stable order.
var Classes = []Class{OK, Rejected, CallTimeout, PermitTimeout, RateTimeout, Error}

// Defaults for a Config.
const (
	DefaultPermitTimeout = 10 * time.Second
	DefaultCallTimeout   = 2 * time.Second
)

// Config is one budget's shape. The zero Config is not valid (it has no
// call timeout); one with only a CallTimeout is a budget that limits
// nothing but the call's time, and still records every call.
type Config struct {
	// Limiter is the budget's concurrency limit: Fixed(n) for n permits of
	// its own, a *Pool from NewPool shared with other budgets, or an
	// *Adaptive from NewAdaptive. Nil: no concurrency limit.
	Limiter Limiter `json:"-" yaml:"-"`
	// Rate caps calls started per second by this budget; 0 means no rate
	// limit. A budget drawing from a shared Pool keeps its own rate.
	Rate float64 `json:"rate,omitempty" yaml:"rate,omitempty"`
	// Burst is how many calls may start at once under Rate (≥ 1 when Rate > 0;
	// 0 means 1).
	Burst int `json:"burst,omitempty" yaml:"burst,omitempty"`
	// PermitTimeout is how long a caller may wait before its call, for a
	// rate token and a permit together: > 0 when the budget has a Limiter
	// or a Rate; with neither no caller waits, and it may be 0.
	PermitTimeout time.Duration `json:"permit_timeout" yaml:"permit_timeout"`
	// CallTimeout is how long the call may take once the permit is held (> 0).
	CallTimeout time.Duration `json:"call_timeout" yaml:"call_timeout"`
	// Success and Rejection are the HTTP statuses judged OK and Rejected;
	// every other status is an Error. A nil Success keeps the default
	// judging (2xx OK; 503 and 429 Rejected), and Rejection must then be
	// nil too. New keeps copies of both.
	Success   []int `json:"success,omitempty" yaml:"success,omitempty"`
	Rejection []int `json:"rejection,omitempty" yaml:"rejection,omitempty"`
}

// Count is how many calls ended in class c, over every dependency of
// calls (a run's calls by dependency and class).
func Count(calls map[string]map[Class]int, c Class) int {
	n := 0
	for _, classes := range calls {
		n += classes[c]
	}
	return n
}

// Validate names the first bad field.
func (c Config) Validate() error {
	if c.Limiter != nil {
		if err := c.Limiter.validate(); err != nil {
			return err
		}
	}
	waits := c.Limiter != nil || c.Rate > 0
	switch {
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate: %v must be ≥ 0 and finite", c.Rate)
	case c.Burst < 0:
		return fmt.Errorf("burst: %d must be ≥ 0", c.Burst)
	case c.PermitTimeout < 0 || c.PermitTimeout == 0 && waits:
		return fmt.Errorf("permit_timeout: %v must be > 0 (or 0 with no limiter and no rate)", c.PermitTimeout)
	case c.CallTimeout <= 0:
		return fmt.Errorf("call_timeout: %v must be > 0", c.CallTimeout)
	case c.Success == nil && c.Rejection != nil:
		return fmt.Errorf("rejection: %v needs success statuses too (with none, the default judging applies)", c.Rejection)
	}
	return nil
}

// Result is one call's outcome.
type Result struct {
	Class Class
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// RateWait is the time spent waiting for a rate token, PermitWait the
	// time then spent waiting for a permit: each the real time waited, zero
	// for a wait the budget does not have or the caller never reached (no
	// permit wait after a RateTimeout). After a RateTimeout or a
	// PermitTimeout they add up to the permit timeout (exactly under
	// testing/synctest; plus the timers' lateness in real time).
	RateWait, PermitWait time.Duration
	// Latency is the time of the call itself (zero when it was never made).
	Latency time.Duration
	Err     error
	// inFlight is the permits held under the budget's limiter once this
	// call held its own (itself included), for an adaptive limit's update.
	inFlight int
}

// Call is the guarded operation: it gets a context carrying the call
// timeout and returns the HTTP status it received, or an error.
type Call func(ctx context.Context) (status int, err error)

// Budget guards calls with its Config's limiter, rate limit and deadlines.
// It is safe for concurrent use.
type Budget struct {
	name    string
	cfg     Config
	tokens  *rate.Limiter // nil: no rate limit
	metrics *Metrics
}

// New returns a budget named name (for errors, logs and the gauge of a
// moving limit) with cfg, recording into m. It returns an error naming the
// bad field of an invalid cfg.
func New(name string, cfg Config, m *Metrics) (*Budget, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("budgets: %s: %w", name, err)
	}
	if m == nil {
		return nil, errors.New("budgets: " + name + ": nil metrics")
	}
	cfg.Success, cfg.Rejection = slices.Clone(cfg.Success), slices.Clone(cfg.Rejection)
	b := &Budget{name: name, cfg: cfg, metrics: m}
	if cfg.Rate > 0 {
		b.tokens = rate.NewLimiter(rate.Limit(cfg.Rate), max(cfg.Burst, 1))
	}
	if cfg.Limiter != nil {
		// Only a limit that moves has the gauge: watch never calls back
		// for a fixed one, so its series never exists.
		cfg.Limiter.watch(func(n int) { m.limit.WithLabelValues(name).Set(float64(n)) })
	}
	return b, nil
}

// Name returns the budget's name.
func (b *Budget) Name() string { return b.name }

// Config returns the budget's configuration as given (its status lists
// copied).
func (b *Budget) Config() Config {
	c := b.cfg
	c.Success, c.Rejection = slices.Clone(c.Success), slices.Clone(c.Rejection)
	return c
}

// Do waits for a rate token (when the budget has a rate limit), then for a
// permit (when it has a limiter), then runs call with the call timeout,
// counted from when the permit is held; the permit is released, with the
// call's outcome, when call returns. No permit is held while waiting for a
// token.
//
// The permit timeout bounds both waits together: one deadline, set when Do
// is called. A caller that cannot have a token before the deadline waits
// until the deadline, takes no token and ends RateTimeout; one that has its
// token but no permit by the deadline ends PermitTimeout, and its token is
// spent (it counted against the rate though no call was made). Either way
// the call is never made. If ctx ends first, Do returns class Error with
// ctx's error, holds no permit and gives back a token it was waiting for.
// A call made while ctx ended does not move an adaptive limit. The result,
// with the real time of each wait, is recorded under dependency.
func (b *Budget) Do(ctx context.Context, dependency string, call Call) Result {
	d := b.metrics.dependency(dependency)
	var res Result
	reached, err := b.acquire(ctx, d, &res)
	if err != nil {
		res.Err = err
		if ctx.Err() != nil {
			res.Class, res.Err = Error, ctx.Err()
		}
		d.record(res, reached)
		return res
	}
	d.start()
	callCtx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	var rtt *rttTrace // nil: the outcome's RTT is the call's time
	if lim := b.cfg.Limiter; lim != nil && lim.timesRTT() {
		rtt = &rttTrace{}
		callCtx = httptrace.WithClientTrace(callCtx, rtt.trace())
	}
	callStart := time.Now()
	status, err := call(callCtx)
	latency := time.Since(callStart)
	// A call that returned an answer is judged by it, even at the deadline.
	timedOut := err != nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	d.end()
	res.Class, res.Status, res.Latency, res.Err = b.classify(status, err, timedOut), status, latency, err
	if lim := b.cfg.Limiter; lim != nil {
		// Rejections and call timeouts are drops; an interrupted run's
		// calls do not move the limit.
		o := Outcome{InFlight: res.inFlight, Dropped: res.Class == Rejected || res.Class == CallTimeout}
		if !o.Dropped {
			o.RTT = rtt.get(latency)
		}
		lim.release(o, ctx.Err() == nil)
	}
	d.record(res, reached)
	return res
}

// stages says which waits a caller reached: the budget has them and the
// caller got that far. Only those waits are observed in the histograms.
type stages struct{ rate, permit bool }

// acquire waits for a rate token, then a permit, before one deadline. It
// sets res's waits, and on failure its Class (RateTimeout or PermitTimeout;
// Do turns an ended ctx into Error).
func (b *Budget) acquire(ctx context.Context, d *depMetrics, res *Result) (stages, error) {
	var reached stages
	if b.cfg.Limiter == nil && b.tokens == nil {
		return reached, nil
	}
	d.waiting(1)
	defer d.waiting(-1)
	start := time.Now()
	deadline := start.Add(b.cfg.PermitTimeout)
	if b.tokens != nil {
		reached.rate = true
		err := b.token(ctx, deadline)
		res.RateWait = time.Since(start)
		if err != nil {
			res.Class = RateTimeout
			return reached, fmt.Errorf("budgets: %s: no rate token within %v: %w", b.name, b.cfg.PermitTimeout, err)
		}
	}
	if b.cfg.Limiter != nil {
		reached.permit = true
		permitStart := time.Now()
		pctx, cancel := context.WithDeadline(ctx, deadline)
		var err error
		res.inFlight, err = b.cfg.Limiter.acquire(pctx)
		cancel()
		res.PermitWait = time.Since(permitStart)
		if err != nil {
			res.Class = PermitTimeout
			return reached, fmt.Errorf("budgets: %s: no permit within %v: %w", b.name, b.cfg.PermitTimeout, err)
		}
	}
	return reached, nil
}

// errNoToken: the limiter had no token for the caller before the deadline.
var errNoToken = errors.New("next token after the deadline")

// token waits for a rate token that comes strictly before deadline. When the
// limiter says none will, it gives the reservation back and waits until the
// deadline anyway (as a semaphore does for a request it can never grant): a
// timeout always means the whole permit timeout passed, and a caller told
// early cannot come straight back and spin. If ctx ends first it gives back
// the token it was waiting for and returns ctx.Err().
func (b *Budget) token(ctx context.Context, deadline time.Time) error {
	now := time.Now()
	r := b.tokens.ReserveN(now, 1) // always OK: 1 ≤ burst
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	inTime := now.Add(delay).Before(deadline)
	if !inTime {
		r.CancelAt(now)
		delay = deadline.Sub(now)
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		if !inTime {
			return errNoToken
		}
		return nil
	case <-ctx.Done():
		if inTime { // a reservation is cancelled once only
			r.Cancel()
		}
		return ctx.Err()
	}
}

func (b *Budget) classify(status int, err error, timedOut bool) Class {
	switch {
	case timedOut:
		return CallTimeout
	case err != nil:
		return Error
	case b.cfg.Success != nil:
		switch {
		case slices.Contains(b.cfg.Success, status):
			return OK
		case slices.Contains(b.cfg.Rejection, status):
			return Rejected
		}
		return Error
	case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
		return Rejected
	case status >= 200 && status < 300:
		return OK
	default:
		return Error
	}
}
