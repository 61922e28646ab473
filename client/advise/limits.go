package advise

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/strategy"
)

// Limits are what a dependency's probe says of its calls beyond their
// permits: a rate where it refused by rate, how long a call may take, and
// how many failed where the advice puts it.
type Limits struct {
	// RatePerSecond, when > 0, holds its calls to that many per second
	// (RateFrom says why): set where the probe's rejections were 429 Too
	// Many Requests, which by its definition (RFC 6585) is a rate limit's.
	RatePerSecond float64 `json:"rate_per_second,omitempty" yaml:"rate_per_second,omitempty"`
	RateFrom      string  `json:"rate_from,omitempty" yaml:"rate_from,omitempty"`
	// CallTimeoutSeconds is how long a call may take: the slowest success
	// the probe saw at any step, the service's queue full included (or the
	// probe's timeout where calls at the advised permits outlasted it;
	// CallTimeoutFrom says which); 0 when the probe measured none.
	CallTimeoutSeconds float64 `json:"call_timeout_seconds" yaml:"call_timeout_seconds"`
	CallTimeoutFrom    string  `json:"call_timeout_from" yaml:"call_timeout_from"`
	// FailedFraction is the share of the probe's requests at the advised
	// permits that failed (rejected, timed out, errors): what retries
	// could recover there.
	FailedFraction float64 `json:"failed_fraction" yaml:"failed_fraction"`
	// RetryAfterSeconds is the longest Retry-After its rejections asked for.
	RetryAfterSeconds float64 `json:"retry_after_seconds,omitempty" yaml:"retry_after_seconds,omitempty"`
}

// RunLimits are the run's settings the advice suggests (loadlab run's
// --call-timeout and --permit-timeout, one for all dependencies), and the
// retries it suggests without putting them in the strategy: retries add
// load, which is the user's choice to make.
type RunLimits struct {
	CallTimeoutSeconds   float64           `json:"call_timeout_seconds" yaml:"call_timeout_seconds"`
	PermitTimeoutSeconds float64           `json:"permit_timeout_seconds" yaml:"permit_timeout_seconds"`
	PermitTimeoutFrom    string            `json:"permit_timeout_from" yaml:"permit_timeout_from"`
	Retries              *strategy.Retries `json:"retries,omitempty" yaml:"retries,omitempty"`
	RetriesFrom          string            `json:"retries_from" yaml:"retries_from"`
}

// refusedByRate says whether the probe drew a 429 Too Many Requests.
func (c Capacity) refusedByRate() bool {
	return slices.ContainsFunc(c.Steps, func(s Step) bool { return s.RejectedStatuses["429"] > 0 })
}

// limit sets d's Limits from its probe c (d's permits and rate at them
// already set), and returns what to warn of.
func (d *Dependency) limit(name string, c Capacity) []string {
	steps := slices.SortedFunc(slices.Values(c.Steps), func(x, y Step) int { return x.Concurrency - y.Concurrency })
	var warn []string
	var refused []float64 // successes per second of the steps refused by rate, less one call per window
	for _, s := range steps {
		if s.RejectedStatuses["429"] > 0 {
			perWindow := 0.0
			if s.WindowSeconds > 0 {
				perWindow = 1 / s.WindowSeconds
			}
			refused = append(refused, s.OKPerSecond-perWindow)
		}
	}
	if len(refused) > 0 {
		if r := floorSig(slices.Min(refused), 3); r > 0 {
			d.RatePerSecond = r
			d.RateFrom = fmt.Sprintf("429 Too Many Requests at %s: a rate limit; the least successes per second of those steps, "+
				"less one call per step window (what a window's count cannot resolve)", plural(len(refused), "step"))
			// Held to its rate, it cannot be refused for the rate: the
			// permits need only carry the rate (Little's law), even past
			// where the probe, unlimited, drew 429s.
			if n := int(math.Ceil(r*d.ServiceTimeSeconds - 1e-9)); n > d.Permits {
				d.Permits, d.PermitsFrom = n, "Little's law at its rate: rate × service time"
			}
			d.CallsPerSecond = min(max(d.CallsPerSecond, float64(d.Permits)/d.ServiceTimeSeconds), r)
		} else {
			warn = append(warn, fmt.Sprintf("%s: 429s say it limits by rate, but the steps it refused had no successes to take a rate from", name))
		}
	}
	at := -1 // the step the permits' rate was read at
	for i, s := range steps {
		if s.Concurrency <= d.Permits {
			at = i
		}
	}
	if at < 0 {
		return warn
	}
	s := steps[at]
	// Held to its rate, its 429s are what the rate prevents: not failures
	// retries would meet.
	byRate := 0
	if d.RatePerSecond > 0 {
		byRate = s.RejectedStatuses["429"]
	}
	if n := s.Requests - byRate; n > 0 {
		d.FailedFraction = float64(s.Rejected-byRate+s.Timeouts+s.Errors) / float64(n)
	}
	if s.RetryAfterSeconds != nil {
		d.RetryAfterSeconds = *s.RetryAfterSeconds
	}
	// The slowest success at any step probed, the queue full included:
	// a call slower than the service ever was, at any load the probe put
	// on it, has met trouble. A step's p99.9 is its slowest success when it
	// had fewer than 1000: no tail beyond it was measured.
	slowest, at := 0.0, 0
	for _, st := range steps {
		if st.MaxSeconds != nil && *st.MaxSeconds > slowest {
			slowest, at = *st.MaxSeconds, st.Concurrency
		}
	}
	switch {
	case s.Timeouts > 0 && c.Plan.TimeoutSeconds > 0:
		d.CallTimeoutSeconds = c.Plan.TimeoutSeconds
		d.CallTimeoutFrom = fmt.Sprintf("the probe's timeout: %d of %d calls at concurrency %d took longer", s.Timeouts, s.Requests, s.Concurrency)
		warn = append(warn, fmt.Sprintf("%s: %d of %d calls at concurrency %d outlasted the probe's timeout of %gs: its tail is longer than was measured; "+
			"a call timeout of %gs cuts them", name, s.Timeouts, s.Requests, s.Concurrency, c.Plan.TimeoutSeconds, c.Plan.TimeoutSeconds))
	case slowest > 0:
		d.CallTimeoutSeconds = ceilSig(slowest, 2)
		d.CallTimeoutFrom = fmt.Sprintf("the slowest success at any step (%.4gs, at concurrency %d)", slowest, at)
	default:
		d.CallTimeoutFrom = "not measured: the probe kept no slowest success"
	}
	return warn
}

// runLimits suggests the run's timeouts and retries from the dependencies'
// limits and the records in flight.
func runLimits(a Advice) RunLimits {
	var r RunLimits
	var worst, failed float64
	var waitOf, failedOf string
	retryAfter := 0.0
	for _, d := range a.Dependencies {
		r.CallTimeoutSeconds = max(r.CallTimeoutSeconds, d.CallTimeoutSeconds) // the run has one
	}
	for _, name := range slices.Sorted(maps.Keys(a.Dependencies)) {
		d := a.Dependencies[name]
		// The longest a call can wait for its turn: every record in flight
		// ahead of it for a rate token, then for a permit, each permit
		// held for a whole call timeout.
		wait := float64(int(math.Ceil(float64(max(a.RecordsInFlight-d.Permits, 0))/float64(d.Permits)))) * r.CallTimeoutSeconds
		if d.RatePerSecond > 0 {
			wait += float64(a.RecordsInFlight) / d.RatePerSecond
		}
		if wait > worst {
			worst, waitOf = wait, name
		}
		if d.FailedFraction > failed {
			failed, failedOf = d.FailedFraction, name
		}
		retryAfter = max(retryAfter, d.RetryAfterSeconds)
	}
	r.PermitTimeoutSeconds = ceilSig(max(worst, r.CallTimeoutSeconds), 2)
	r.PermitTimeoutFrom = fmt.Sprintf("the call timeout: the longest a call can wait for its turn (%.3gs) is shorter", worst)
	if worst > r.CallTimeoutSeconds {
		r.PermitTimeoutFrom = fmt.Sprintf("%s: the longest a call can wait with %d records in flight, %d permits each held for a whole call timeout",
			waitOf, a.RecordsInFlight, a.Dependencies[waitOf].Permits)
		if a.Dependencies[waitOf].RatePerSecond > 0 {
			r.PermitTimeoutFrom += ", and a rate token each first"
		}
	}
	if failed == 0 {
		r.RetriesFrom = "none: the probes saw no failure at the advised permits, and retries add load where a service is overloaded"
		return r
	}
	r.Retries = strategy.LabRetries(true)
	r.Retries.Budget.Ratio, r.Retries.Budget.MinPerSecond = min(1, ceilSig(failed, 2)), 0
	if ra := time.Duration(retryAfter * float64(time.Second)); ra > r.Retries.BaseBackoff {
		r.Retries.BaseBackoff, r.Retries.MaxBackoff = ra, max(r.Retries.MaxBackoff, ra)
	}
	r.RetriesFrom = fmt.Sprintf("%.2g%% of %s's calls at the advised permits failed: a budget of that share of first attempts lets retries "+
		"recover as many, and no more; not in the strategy (retries add load): add them as its retries to use them", 100*failed, failedOf)
	return r
}

// ceilSig and floorSig round x > 0 up or down to digits significant
// digits (a float's last bit does not move a figure across a step).
func ceilSig(x float64, digits int) float64 {
	p := sigScale(x, digits)
	return math.Ceil(x*p*(1-1e-12)) / p
}

func floorSig(x float64, digits int) float64 {
	p := sigScale(x, digits)
	return math.Floor(x*p*(1+1e-12)) / p
}

func sigScale(x float64, digits int) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	return math.Pow(10, float64(digits-1)-math.Floor(math.Log10(x)))
}

// plural is "1 step" or "n steps".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
