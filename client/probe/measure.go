package probe

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Step is one measured step: N users for a window of WindowSeconds.
//
// Counts (Requests, OK, Rejected, Timeouts, Errors) and latencies are of
// the requests that completed inside the window; warm-up and drain are
// excluded. The rates are not counts over the window: each request counts
// for the share of its own duration that lies inside the window (a
// request wholly inside counts 1; one that began in the warm-up or ended
// in the drain, a fraction). With N users always busy this is N times the
// window over the cycle time, exactly, so a window need not be a multiple
// of the service time: counting whole completions would shift a step's
// throughput by up to N requests per window.
type Step struct {
	Concurrency   int     `json:"concurrency"`
	WindowSeconds float64 `json:"window_seconds"`
	Requests      int     `json:"requests"`
	OK            int     `json:"ok"`
	Rejected      int     `json:"rejected"`
	// Timeouts are requests that hit the per-request timeout.
	Timeouts int `json:"timeouts"`
	// Errors are transport errors and statuses neither ok nor rejections;
	// ErrorKinds counts them by kind ("status 500", "connect: connection
	// refused").
	Errors            int            `json:"errors"`
	ErrorKinds        map[string]int `json:"error_kinds,omitempty"`
	OKPerSecond       float64        `json:"ok_per_second"`
	RejectedPerSecond float64        `json:"rejected_per_second"`
	// OKStatuses counts the successes by status ("201": 40): what a
	// virtual copy of the target answers.
	OKStatuses map[string]int `json:"ok_statuses,omitempty"`
	// RejectedStatuses counts the rejections by status ("429": 12): a 429
	// says a rate limit refused, a 503 an overloaded service.
	RejectedStatuses map[string]int `json:"rejected_statuses,omitempty"`
	// RetryAfterSeconds is the longest Retry-After the step's rejections
	// asked for; null when none carried one.
	RetryAfterSeconds *float64 `json:"retry_after_seconds,omitempty"`
	// Latencies of the successes (HDR histogram, 3 significant digits);
	// null when the step had none.
	P50Seconds *float64 `json:"p50_seconds"`
	P90Seconds *float64 `json:"p90_seconds"`
	P99Seconds *float64 `json:"p99_seconds"`
	// P999Seconds is p99.9: the slowest success when the step had fewer
	// than 1000.
	P999Seconds *float64 `json:"p999_seconds"`
	MaxSeconds  *float64 `json:"max_seconds"`
	MeanSeconds *float64 `json:"mean_seconds"`
	// Quantiles are the successes' latency distribution from the same
	// histogram, at QuantilePoints (0 the fastest, 1 the slowest): what a
	// virtual copy of the target draws its service times from.
	Quantiles []Quantile `json:"quantiles,omitempty"`
	// AtRateLimit is set when the requests completed in the window came
	// to 90% or more of Config.MaxRate: the step measured the probe's own
	// limiter as much as the target.
	AtRateLimit bool `json:"at_rate_limit"`
}

// Quantile is one point of a latency distribution: the latency at or
// below which a fraction Q of the successes ended.
type Quantile struct {
	Q       float64 `json:"q"`
	Seconds float64 `json:"seconds"`
}

// QuantilePoints are the fractions at which a step's Quantiles are read.
var QuantilePoints = []float64{0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1}

// Latencies are recorded in microseconds from 1 µs to one hour, to 3
// significant digits.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
	// maxErrorKinds bounds ErrorKinds; further kinds are counted as "other".
	maxErrorKinds = 16
)

// recorder collects one step's requests. Every request of the step ends
// before the recorder is read (the step drains), so the window's edges
// need no care beyond the end time.
type recorder struct {
	from, to time.Time

	mu                      sync.Mutex
	hist                    *hdrhistogram.Histogram
	okWork, rejWork         float64 // shares of requests inside the window
	okSum                   time.Duration
	ok, rej, timedOut, errs int
	okAny                   int // successes in or out of the window: has anything succeeded yet?
	kinds                   map[string]int
	rejStatuses             map[string]int
	okStatuses              map[string]int
	longestRetryAfter       time.Duration
	// failedAny counts failures in or out of the window, by kind
	// ("rejected", "timeout", or an error's kind): the first step's early
	// end reads them.
	failedAny map[string]int
}

func newRecorder(from time.Time, window time.Duration) *recorder {
	return &recorder{from: from, to: from.Add(window), hist: hdrhistogram.New(histLowest, histHighest, histDigits), kinds: map[string]int{},
		rejStatuses: map[string]int{}, okStatuses: map[string]int{}, failedAny: map[string]int{}}
}

// share is the part of [start, end] inside the window, as a fraction of
// the request's duration.
func (r *recorder) share(start, end time.Time) float64 {
	d := end.Sub(start)
	lo, hi := maxTime(start, r.from), minTime(end, r.to)
	if d <= 0 {
		if !end.Before(r.from) && end.Before(r.to) {
			return 1
		}
		return 0
	}
	if !hi.After(lo) {
		return 0
	}
	return float64(hi.Sub(lo)) / float64(d)
}

func (r *recorder) add(start, end time.Time, o outcome, kind string) {
	in := !end.Before(r.from) && end.Before(r.to)
	share := r.share(start, end)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o {
	case outOK:
		r.okWork += share
		r.okAny++
	case outRejected:
		r.rejWork += share
		r.failedAny["rejected"]++
	case outTimeout:
		r.failedAny["timeout"]++
	case outError:
		if _, seen := r.failedAny[kind]; seen || len(r.failedAny) < maxErrorKinds {
			r.failedAny[kind]++
		} else {
			r.failedAny["other"]++
		}
	}
	if !in {
		return
	}
	switch o {
	case outOK:
		r.ok++
		if kind != "" {
			r.okStatuses[kind]++
		}
		d := end.Sub(start)
		r.okSum += d
		_ = r.hist.RecordValue(min(max(d.Microseconds(), histLowest), histHighest))
	case outRejected:
		r.rej++
		if kind != "" {
			r.rejStatuses[kind]++
		}
	case outTimeout:
		r.timedOut++
	case outError:
		r.errs++
		if _, seen := r.kinds[kind]; !seen && len(r.kinds) >= maxErrorKinds {
			kind = "other"
		}
		r.kinds[kind]++
	}
}

// retryAfter keeps the longest Retry-After a rejection asked for.
func (r *recorder) retryAfter(d time.Duration) {
	if d <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.longestRetryAfter = max(r.longestRetryAfter, d)
}

// failedEarly says, when no request has succeeded and at least n have
// failed (in the window or not), what they met; else "".
func (r *recorder) failedEarly(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	total := 0
	for _, c := range r.failedAny {
		total += c
	}
	if r.okAny > 0 || total < n {
		return ""
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(r.failedAny)) {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, r.failedAny[k]))
	}
	return fmt.Sprintf("its first %d requests failed and none succeeded (%s)", total, strings.Join(kinds, ", "))
}

// succeeded is how many requests have succeeded so far, in the window or
// not.
func (r *recorder) succeeded() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.okAny
}

// step summarises the recorder as the step of n users.
func (r *recorder) step(n int, maxRate float64) Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.to.Sub(r.from).Seconds()
	st := Step{Concurrency: n, WindowSeconds: w, Requests: r.ok + r.rej + r.timedOut + r.errs,
		OK: r.ok, Rejected: r.rej, Timeouts: r.timedOut, Errors: r.errs,
		OKPerSecond: r.okWork / w, RejectedPerSecond: r.rejWork / w}
	if len(r.kinds) > 0 {
		st.ErrorKinds = r.kinds
	}
	if len(r.okStatuses) > 0 {
		st.OKStatuses = r.okStatuses
	}
	if len(r.rejStatuses) > 0 {
		st.RejectedStatuses = r.rejStatuses
	}
	if r.longestRetryAfter > 0 {
		v := r.longestRetryAfter.Seconds()
		st.RetryAfterSeconds = &v
	}
	st.AtRateLimit = float64(st.Requests)/w >= 0.9*maxRate
	if r.ok > 0 {
		sec := func(us int64) *float64 { v := float64(us) / 1e6; return &v }
		st.P50Seconds = sec(r.hist.ValueAtPercentile(50))
		st.P90Seconds = sec(r.hist.ValueAtPercentile(90))
		st.P99Seconds = sec(r.hist.ValueAtPercentile(99))
		st.P999Seconds = sec(r.hist.ValueAtPercentile(99.9))
		st.MaxSeconds = sec(r.hist.Max())
		mean := (r.okSum / time.Duration(r.ok)).Seconds()
		st.MeanSeconds = &mean
		for _, q := range QuantilePoints {
			us := r.hist.ValueAtPercentile(100 * q)
			switch q {
			case 0:
				us = r.hist.Min()
			case 1:
				us = r.hist.Max()
			}
			st.Quantiles = append(st.Quantiles, Quantile{Q: q, Seconds: float64(us) / 1e6})
		}
	}
	return st
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
