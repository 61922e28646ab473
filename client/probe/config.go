// Package probe measures the capacity of one dependency: it drives one
// named method and URL in closed loop at stepped concurrency (N users,
// each sending, waiting for the answer, and sending again, with no think
// time) and reports, per step, successes and rejections per second,
// latency percentiles, timeouts and errors; then, from the steps, the
// service time at low load, the throughput plateau, the knee, the
// concurrency at which rejections begin, and a fit of the Universal
// Scalability Law.
//
// Safety: a probe sends nothing but Config.Method to Config.Target — no
// identification, admin, reset or metrics request, not even to a loadlab
// mock — and every bound (concurrency, rate over all users, total
// duration, per-request timeout) is validated, shown in the plan before
// the first request, and enforced.
package probe

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/transport"

	"github.com/loadlab/loadlab/mockservice/field"
)

// Defaults of Config, as loadlab probe's flags state them.
const (
	DefaultStep               = 2 * time.Second
	DefaultWarmUp             = 500 * time.Millisecond
	DefaultTimeout            = 10 * time.Second
	DefaultMaxConcurrency     = 64
	DefaultMaxRate            = 2000.0 // requests per second over all users
	DefaultMaxDuration        = 5 * time.Minute
	DefaultStopRejectionRatio = 0.05
	DefaultStopErrorRatio     = 0.05
	DefaultStopP99            = 5 * time.Second
	// MaxConcurrencyLimit is the most users any probe may run: beyond it a
	// probe is a load test, not a measurement of one dependency.
	MaxConcurrencyLimit = 4096
)

// Config is one probe. Start from Default and set Target.
type Config struct {
	// Target is the absolute http or https URL every request goes to.
	Target string
	// Dial, when set, opens the probe's connections instead of the
	// system's dialer: an in-memory wire, for tests whose clock is fake.
	Dial transport.Dialer
	// Method is the HTTP method of every request (GET by default).
	Method string
	// Body is a text/template rendered for each request: {{.ID}} is a
	// unique request id (the run's random prefix and the sequence number),
	// {{.Seq}} the request's sequence number from 1. Empty sends no body.
	Body string
	// Headers are added to every request. Content-Type defaults to
	// application/json when there is a body and no Content-Type is given.
	Headers http.Header
	// Concurrency lists the steps (numbers of users), probed in increasing
	// order; empty means 1, 2, … MaxConcurrency.
	Concurrency []int
	// Step is how long each step is measured; WarmUp precedes every step
	// (each step starts from an idle target: the previous step's requests
	// are drained first) and is not measured.
	Step, WarmUp time.Duration
	// Timeout bounds each request, from its send to the end of its answer.
	Timeout time.Duration
	// MaxConcurrency bounds the users; MaxRate the requests per second
	// over all users (every request, ok or not, waits for a token, so a
	// user that is refused at once cannot spin); MaxDuration the whole
	// probe, warm-ups and drains included.
	MaxConcurrency int
	MaxRate        float64
	MaxDuration    time.Duration
	// The probe stops after a step whose rejections, or errors and
	// timeouts, exceed these fractions of the requests that completed in
	// its window, or whose p99 latency of successes exceeds StopP99 (0: no
	// latency limit).
	StopRejectionRatio, StopErrorRatio float64
	StopP99                            time.Duration
	// OKStatuses and RejectStatuses classify answers; any other status is
	// an error. Empty OKStatuses means every 2xx; empty RejectStatuses
	// means 503 and 429.
	OKStatuses, RejectStatuses []int
}

// Default returns a Config with every bound at its default and no target.
func Default() Config {
	return Config{
		Method: http.MethodGet, Step: DefaultStep, WarmUp: DefaultWarmUp, Timeout: DefaultTimeout,
		MaxConcurrency: DefaultMaxConcurrency, MaxRate: DefaultMaxRate, MaxDuration: DefaultMaxDuration,
		StopRejectionRatio: DefaultStopRejectionRatio, StopErrorRatio: DefaultStopErrorRatio, StopP99: DefaultStopP99,
	}
}

// Validate reports the first invalid field: its error is a *field.Error
// naming the field in snake case ("max_rate" for MaxRate).
func (c Config) Validate() error {
	if err := c.validateTarget(); err != nil {
		return err
	}
	if err := c.validateBounds(); err != nil {
		return err
	}
	if c.Step+c.WarmUp > c.MaxDuration {
		return field.Errorf("max_duration", "%v is shorter than one step (warm-up %v + step %v)", c.MaxDuration, c.WarmUp, c.Step)
	}
	for _, n := range c.Concurrency {
		if n < 1 || n > c.MaxConcurrency {
			return field.Errorf("concurrency", "%d is outside 1…%d (the max concurrency)", n, c.MaxConcurrency)
		}
	}
	if err := c.validateStatuses(); err != nil {
		return err
	}
	if _, err := newBodyMaker(c.Body, "probe-check-"); err != nil {
		return err
	}
	return nil
}

// validateTarget checks where the requests go and how.
func (c Config) validateTarget() error {
	u, err := url.Parse(c.Target)
	switch {
	case c.Target == "":
		return field.Errorf("target", "required (the URL to probe)")
	case err != nil:
		return field.Errorf("target", "%w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return field.Errorf("target", "%q must be an absolute http:// or https:// URL", c.Target)
	case !validMethod(c.Method):
		return field.Errorf("method", "%q is not an HTTP method", c.Method)
	}
	return nil
}

// validateBounds checks every bound and stop limit on its own.
func (c Config) validateBounds() error {
	switch {
	case c.MaxConcurrency < 1 || c.MaxConcurrency > MaxConcurrencyLimit:
		return field.Errorf("max_concurrency", "%d must be between 1 and %d", c.MaxConcurrency, MaxConcurrencyLimit)
	case !(c.MaxRate > 0) || math.IsInf(c.MaxRate, 0):
		return field.Errorf("max_rate", "%v must be a finite number of requests per second above 0", c.MaxRate)
	case c.MaxDuration <= 0:
		return field.Errorf("max_duration", "%v must be above 0", c.MaxDuration)
	case c.Step < 10*time.Millisecond:
		return field.Errorf("step", "%v must be at least 10ms", c.Step)
	case c.WarmUp < 0:
		return field.Errorf("warm_up", "%v must be ≥ 0", c.WarmUp)
	case c.Timeout <= 0:
		return field.Errorf("timeout", "%v must be above 0", c.Timeout)
	case !(c.StopRejectionRatio >= 0 && c.StopRejectionRatio <= 1):
		return field.Errorf("stop_rejection_ratio", "%v must be between 0 and 1", c.StopRejectionRatio)
	case !(c.StopErrorRatio >= 0 && c.StopErrorRatio <= 1):
		return field.Errorf("stop_error_ratio", "%v must be between 0 and 1", c.StopErrorRatio)
	case c.StopP99 < 0:
		return field.Errorf("stop_p99", "%v must be ≥ 0 (0: no latency limit)", c.StopP99)
	}
	return nil
}

// validateStatuses checks the statuses that classify answers.
func (c Config) validateStatuses() error {
	for _, l := range []struct {
		field    string
		statuses []int
	}{{"ok_statuses", c.OKStatuses}, {"reject_statuses", c.RejectStatuses}} {
		for _, s := range l.statuses {
			if s < 100 || s > 599 {
				return field.Errorf(l.field, "%d is not an HTTP status", s)
			}
		}
	}
	for _, s := range c.OKStatuses {
		if slices.Contains(c.rejectStatuses(), s) {
			return field.Errorf("ok_statuses", "%d is also a rejection status", s)
		}
	}
	return nil
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, r := range m {
		// A token (RFC 9110): the characters a method may have.
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// steps returns the concurrencies to probe: sorted, without repeats.
func (c Config) steps() []int {
	if len(c.Concurrency) == 0 {
		out := make([]int, c.MaxConcurrency)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	out := slices.Clone(c.Concurrency)
	slices.Sort(out)
	return slices.Compact(out)
}

func (c Config) rejectStatuses() []int {
	if len(c.RejectStatuses) == 0 {
		return []int{http.StatusServiceUnavailable, http.StatusTooManyRequests}
	}
	return c.RejectStatuses
}

// ParseConcurrency parses a list of steps such as "1-16,24,32,48,64":
// comma-separated numbers and inclusive FROM-TO ranges, each within
// 1…MaxConcurrencyLimit. Its error says what is wrong with s.
func ParseConcurrency(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number or a range FROM-TO", part)
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || to < from {
				return nil, fmt.Errorf("%q is not a range FROM-TO with FROM ≤ TO", part)
			}
		}
		if from < 1 || to > MaxConcurrencyLimit {
			return nil, fmt.Errorf("%q is outside 1…%d", part, MaxConcurrencyLimit)
		}
		for n := from; n <= to; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

// Plan is what a probe will do, shown before its first request.
type Plan struct {
	Target             string  `json:"target"`
	Method             string  `json:"method"`
	Concurrency        []int   `json:"concurrency"`
	StepSeconds        float64 `json:"step_seconds"`
	WarmUpSeconds      float64 `json:"warm_up_seconds"`
	TimeoutSeconds     float64 `json:"timeout_seconds"`
	MaxConcurrency     int     `json:"max_concurrency"`
	MaxRatePerSecond   float64 `json:"max_rate_per_second"`
	MaxDurationSeconds float64 `json:"max_duration_seconds"`
	// PlannedSeconds is the warm-ups and steps of every planned step,
	// without the drains between steps (each at most the timeout).
	PlannedSeconds     float64 `json:"planned_seconds"`
	StopRejectionRatio float64 `json:"stop_rejection_ratio"`
	StopErrorRatio     float64 `json:"stop_error_ratio"`
	// StopP99Seconds is 0 when there is no latency limit.
	StopP99Seconds float64 `json:"stop_p99_seconds"`
	// FitSteps is how many of the planned steps fit in the max duration;
	// less than len(Concurrency) means the probe will stop at the bound.
	FitSteps int `json:"fit_steps"`
	// OKStatuses and RejectStatuses are the statuses given (none: every
	// 2xx is a success; 503 and 429 are rejections).
	OKStatuses     []int `json:"ok_statuses,omitempty"`
	RejectStatuses []int `json:"reject_statuses,omitempty"`
}

// Config is the probe the plan describes, again, at target (the same
// steps, durations, bounds, stops and statuses; no body or headers, which
// a plan does not keep).
func (p Plan) Config(target string) Config {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return Config{Target: target, Method: p.Method, Concurrency: slices.Clone(p.Concurrency),
		Step: sec(p.StepSeconds), WarmUp: sec(p.WarmUpSeconds), Timeout: sec(p.TimeoutSeconds),
		MaxConcurrency: p.MaxConcurrency, MaxRate: p.MaxRatePerSecond, MaxDuration: sec(p.MaxDurationSeconds),
		StopRejectionRatio: p.StopRejectionRatio, StopErrorRatio: p.StopErrorRatio, StopP99: sec(p.StopP99Seconds),
		OKStatuses: slices.Clone(p.OKStatuses), RejectStatuses: slices.Clone(p.RejectStatuses)}
}

// Plan returns what Run will do with c (c must be valid).
func (c Config) Plan() Plan {
	steps := c.steps()
	p := Plan{Target: c.Target, Method: c.Method, Concurrency: steps,
		StepSeconds: c.Step.Seconds(), WarmUpSeconds: c.WarmUp.Seconds(), TimeoutSeconds: c.Timeout.Seconds(),
		MaxConcurrency: c.MaxConcurrency, MaxRatePerSecond: c.MaxRate, MaxDurationSeconds: c.MaxDuration.Seconds(),
		StopRejectionRatio: c.StopRejectionRatio, StopErrorRatio: c.StopErrorRatio, StopP99Seconds: c.StopP99.Seconds(),
		OKStatuses: c.OKStatuses, RejectStatuses: c.RejectStatuses}
	per := c.Step + c.WarmUp
	p.PlannedSeconds = (time.Duration(len(steps)) * per).Seconds()
	p.FitSteps = min(len(steps), int(c.MaxDuration/per))
	return p
}
