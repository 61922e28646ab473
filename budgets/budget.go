// Package budgets guards outbound calls with per-dependency budgets: a
// concurrency limit (permits), an optional rate limit, and two separate
// deadlines — how long a caller may wait before its call (for a rate token,
// then a permit: one permit timeout bounds both), and how long the call
// itself may take, counted only from the moment the permit is held, so local
// queueing never eats the call's time. No permit is held while waiting for a
// token.
//
// Every call ends in exactly one Class and is recorded, with its waits and
// latency, in the Metrics of the dependency it went to. One Budget may guard
// several dependencies; several budgets may draw from one Pool of permits,
// each with its own rate limit. Metrics stay per dependency.
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
	// OK: the dependency answered 2xx.
	OK Class = "ok"
	// Rejected: the dependency refused at its door (HTTP 503 or 429).
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
	// NoLimit as a Config's Limit: no concurrency limit of the budget's own
	// (with a rate, the budget limits the rate alone; with a Pool, the
	// pool's permits apply; with neither, use Unlimited).
	NoLimit              = 0
	DefaultPermitTimeout = 10 * time.Second
	DefaultCallTimeout   = 2 * time.Second
)

// Config is one budget's shape.
type Config struct {
	// Limit is how many calls may be in flight at once (≥ 1), in a pool of
	// the budget's own; or NoLimit for a budget that only limits the rate or
	// draws from Pool.
	Limit int `json:"limit" yaml:"limit"`
	// Pool, when set, is the pool of permits the budget draws from, shared
	// with every other budget given the same Pool; Limit must then be
	// NoLimit. Nil: the budget's permits are Limit's.
	Pool *Pool `json:"-" yaml:"-"`
	// Adaptive, when set, is an adaptive limit the budget's permits come
	// from (Limit NoLimit, no Pool): it moves after every call of the
	// budget (strategy C5). Its current limit is the gauge
	// loadlab_client_limit.
	Adaptive *Adaptive `json:"-" yaml:"-"`
	// Rate caps calls started per second by this budget; 0 means no rate
	// limit. A budget drawing from a shared Pool keeps its own rate.
	Rate float64 `json:"rate,omitempty" yaml:"rate,omitempty"`
	// Burst is how many calls may start at once under Rate (≥ 1 when Rate > 0;
	// 0 means 1).
	Burst int `json:"burst,omitempty" yaml:"burst,omitempty"`
	// PermitTimeout is how long a caller may wait before its call, for a
	// rate token and a permit together (> 0).
	PermitTimeout time.Duration `json:"permit_timeout" yaml:"permit_timeout"`
	// CallTimeout is how long the call may take once the permit is held (> 0).
	CallTimeout time.Duration `json:"call_timeout" yaml:"call_timeout"`
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Pool != nil && c.Limit != NoLimit:
		return fmt.Errorf("limit: %d must be %d (NoLimit) with a pool, whose permits replace it", c.Limit, NoLimit)
	case c.Pool != nil && c.Pool.sem == nil:
		return errors.New("pool: the zero Pool holds no permits; make one with NewPool")
	case c.checkAdaptive() != nil:
		return c.checkAdaptive()
	case c.Limit < 0 || c.Limit == NoLimit && c.Rate == 0 && c.Pool == nil && c.Adaptive == nil:
		return fmt.Errorf("limit: %d must be ≥ 1 (or %d with a rate or a pool)", c.Limit, NoLimit)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate: %v must be ≥ 0 and finite", c.Rate)
	case c.Burst < 0:
		return fmt.Errorf("burst: %d must be ≥ 0", c.Burst)
	case c.PermitTimeout <= 0:
		return fmt.Errorf("permit_timeout: %v must be > 0", c.PermitTimeout)
	case c.CallTimeout <= 0:
		return fmt.Errorf("call_timeout: %v must be > 0", c.CallTimeout)
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
	// inFlight is the calls in flight under an adaptive limit once this
	// one held its permit (itself included), for the limit's update.
	inFlight int
}

// Call is the guarded operation: it gets a context carrying the call
// timeout and returns the HTTP status it received, or an error.
type Call func(ctx context.Context) (status int, err error)

// Budget guards calls with permits, an optional rate limit and the two
// deadlines. It is safe for concurrent use.
type Budget struct {
	name    string
	cfg     Config
	pool    *Pool         // nil: no concurrency limit (or an adaptive one)
	adapt   *Adaptive     // nil: no adaptive limit
	limiter *rate.Limiter // nil: no rate limit
	// success and rejection, when success is not nil, replace the default
	// judging of answers (Statuses).
	success, rejection []int
	metrics            *Metrics
}

// New returns a budget named name (for errors and logs) with cfg, recording
// into m. It returns an error naming the bad field of an invalid cfg.
func New(name string, cfg Config, m *Metrics) (*Budget, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("budgets: %s: %w", name, err)
	}
	if m == nil {
		return nil, errors.New("budgets: " + name + ": nil metrics")
	}
	b := &Budget{name: name, cfg: cfg, pool: cfg.Pool, adapt: cfg.Adaptive, metrics: m}
	if b.adapt != nil {
		g := m.limit.WithLabelValues(name)
		b.adapt.watch(func(n int) { g.Set(float64(n)) })
	}
	if cfg.Limit != NoLimit {
		b.pool = NewPool(cfg.Limit)
	}
	if cfg.Rate > 0 {
		b.limiter = rate.NewLimiter(rate.Limit(cfg.Rate), max(cfg.Burst, 1))
	}
	return b, nil
}

// Unlimited returns a budget with no permits and no rate limit: only the call
// timeout applies. It is what "no dependency limiter" means, and still
// records every call in m.
func Unlimited(name string, callTimeout time.Duration, m *Metrics) (*Budget, error) {
	if callTimeout <= 0 {
		return nil, fmt.Errorf("budgets: %s: call_timeout: %v must be > 0", name, callTimeout)
	}
	if m == nil {
		return nil, errors.New("budgets: " + name + ": nil metrics")
	}
	return &Budget{name: name, cfg: Config{CallTimeout: callTimeout}, metrics: m}, nil
}

// Statuses makes the budget judge answers by the given statuses instead of
// the default (2xx OK; 503 and 429 Rejected; any other an Error): success
// and rejection list the statuses that are OK and Rejected, every other is
// an Error. Call it before the budget's first call. It returns b.
func (b *Budget) Statuses(success, rejection []int) *Budget {
	b.success, b.rejection = slices.Clone(success), slices.Clone(rejection)
	if b.success == nil {
		b.success = []int{}
	}
	return b
}

// Adaptive returns the budget's adaptive limit (nil: none).
func (b *Budget) Adaptive() *Adaptive { return b.adapt }

// Name returns the budget's name.
func (b *Budget) Name() string { return b.name }

// Config returns the budget's configuration as given (Limit NoLimit for
// Unlimited).
func (b *Budget) Config() Config { return b.cfg }

// Do waits for a rate token (when the budget has a rate limit), then for a
// permit (when it has permits), then runs call with the call timeout,
// counted from when the permit is held; the permit is released when call
// returns. No permit is held while waiting for a token.
//
// The permit timeout bounds both waits together: one deadline, set when Do
// is called. A caller that cannot have a token before the deadline waits
// until the deadline, takes no token and ends RateTimeout; one that has its
// token but no permit by the deadline ends PermitTimeout, and its token is
// spent (it counted against the rate though no call was made). Either way
// the call is never made. If ctx ends first, Do returns class Error with
// ctx's error, holds no permit and gives back a token it was waiting for.
// The result, with the real time of each wait, is recorded under
// dependency.
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
	var rtt *rttTrace
	if b.adapt != nil {
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
	if b.pool != nil {
		b.pool.release()
	}
	res.Class, res.Status, res.Latency, res.Err = b.classify(status, err, timedOut), status, latency, err
	if b.adapt != nil {
		// Rejections and call timeouts are drops; an interrupted run's
		// calls do not move the limit.
		o := Outcome{InFlight: res.inFlight, Dropped: res.Class == Rejected || res.Class == CallTimeout}
		if !o.Dropped {
			o.RTT = rtt.get(latency)
		}
		b.adapt.release(o, ctx.Err() == nil)
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
	if b.pool == nil && b.limiter == nil && b.adapt == nil {
		return reached, nil
	}
	d.waiting(1)
	defer d.waiting(-1)
	start := time.Now()
	deadline := start.Add(b.cfg.PermitTimeout)
	if b.limiter != nil {
		reached.rate = true
		err := b.token(ctx, deadline)
		res.RateWait = time.Since(start)
		if err != nil {
			res.Class = RateTimeout
			return reached, fmt.Errorf("budgets: %s: no rate token within %v: %w", b.name, b.cfg.PermitTimeout, err)
		}
	}
	if b.pool != nil || b.adapt != nil {
		reached.permit = true
		permitStart := time.Now()
		pctx, cancel := context.WithDeadline(ctx, deadline)
		var err error
		if b.adapt != nil {
			res.inFlight, err = b.adapt.acquire(pctx)
		} else {
			err = b.pool.acquire(pctx)
		}
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
	r := b.limiter.ReserveN(now, 1) // always OK: 1 ≤ burst
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
	case b.success != nil:
		switch {
		case slices.Contains(b.success, status):
			return OK
		case slices.Contains(b.rejection, status):
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
