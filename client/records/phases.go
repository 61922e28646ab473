package records

import (
	"net/url"
	"time"

	"github.com/loadlab/loadlab/mockservice/field"
)

// Phase is a named part of a time-bounded run, for per-phase figures: the
// experiment runner changes the mock service's settings at its boundaries.
type Phase struct {
	Name string `json:"name"`
	// Duration is lab time (before the time scale).
	Duration time.Duration `json:"duration"`
}

// DrainPhase names the extra phase of a phased run in which the records
// still in progress at the end of the last phase ended. No phase of a
// Config may take the name.
const DrainPhase = "drain"

// PhaseResult is one phase's figures. Every event (a record's beginning,
// its end, a write's answer) falls in the phase whose [Start, End) holds
// the lab time at which it happened.
type PhaseResult struct {
	Name string `json:"name"`
	// Start and End are lab seconds from the clock's start. The drain phase
	// runs from the run's duration to the last record's end. When the run
	// ended before its duration (its records cap reached, or interrupted),
	// End stops at the run's end: a phase never reached lasts 0 s.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Begun counts the records begun in the phase, Ended those that ended
	// in it (in any state), Accepted those of them whose write was
	// accepted (complete and incomplete).
	Begun                int     `json:"begun"`
	Ended                int     `json:"ended"`
	Accepted             int     `json:"accepted"`
	AcceptedPerLabSecond float64 `json:"accepted_per_lab_second"`
	// Limits summarises each adaptive limit over the phase's samples.
	Limits map[string]LimitStats `json:"limits,omitempty"`
	// WriteRejections counts the calls to the write's dependency answered
	// with a rejection status (503, 429), by the time of the answer.
	WriteRejections int `json:"write_rejections"`
	// States counts the records that ended in the phase by terminal state
	// (every state a record can end in, zeros included).
	States map[State]int `json:"states"`
	// PeakConcurrentWrites is the most calls to the write's dependency in
	// flight at once at the client during the phase: counted exactly
	// around each call (from when it holds its permit to its answer), not
	// sampled. Rejections are quick, so it can exceed what the system of
	// record admits.
	PeakConcurrentWrites int `json:"peak_concurrent_writes"`
	// LatencyMs is the latency of the records that ended in the phase, from
	// their beginning to their terminal state, in lab milliseconds.
	LatencyMs Percentiles `json:"record_latency_ms"`
}

// Percentiles summarises latencies: nearest-rank quantiles to three
// significant digits (HDR histogram), and the exact maximum.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// SecondCounts is one lab second of a time-bounded run: T is its index
// from the clock's start (the second [T, T+1)), and the counts are of the
// events in it, as in PhaseResult.
type SecondCounts struct {
	T               int `json:"t"`
	Accepted        int `json:"accepted"`
	WriteRejections int `json:"write_rejections"`
	Ended           int `json:"ended"`
}

// timeBound returns c with Duration set from its phases when it has phases
// and no Duration.
func (c Config) timeBound() Config {
	if c.Duration == 0 && len(c.Phases) > 0 {
		for _, p := range c.Phases {
			c.Duration += p.Duration
		}
	}
	return c
}

// validateTime checks Duration, Phases and CallURLs, naming the field.
func (c Config) validateTime() error {
	if c.Duration < 0 {
		return field.Errorf("duration", "%v must be ≥ 0 (0: no time limit)", c.Duration)
	}
	var sum time.Duration
	seen := map[string]bool{}
	for i, p := range c.Phases {
		switch {
		case p.Name == "":
			return field.Errorf("phases", "phase %d has no name", i+1)
		case p.Name == DrainPhase:
			return field.Errorf("phases", "%q is the name of the phase after the last, in which records in progress end: choose another", p.Name)
		case seen[p.Name]:
			return field.Errorf("phases", "%q appears twice", p.Name)
		case p.Duration <= 0:
			return field.Errorf("phases", "%s: duration %v must be > 0", p.Name, p.Duration)
		}
		seen[p.Name] = true
		sum += p.Duration
	}
	if len(c.Phases) > 0 && c.Duration > 0 && sum != c.Duration {
		return field.Errorf("phases", "they add up to %v, not the duration %v", sum, c.Duration)
	}
	p := c.PipelineOrLab()
	for dep, u := range c.CallURLs {
		if p.Dependency(dep) == nil {
			return field.Errorf("call_urls", "%q is not a dependency of pipeline %s (%v)", dep, p.Name, p.Names())
		}
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return field.Errorf("call_urls", "%s: %q is not a base URL (http://host:port)", dep, u)
		}
	}
	return nil
}
