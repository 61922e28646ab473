package probe

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// The analysis' rules, as fractions and factors.
const (
	// PlateauBand: the steps whose successes per second reach this
	// fraction of the highest step's form the plateau set; the plateau is
	// the median of their successes per second. A median over the steps
	// near the top, not the top few alone, so that many noisy steps on a
	// flat plateau do not lift it to their maximum.
	PlateauBand = 0.90
	// KneeFraction: the knee is the smallest concurrency whose successes
	// per second reach this fraction of the plateau.
	KneeFraction = 0.95
	// EstablishedFactor: a knee is reported only when a step at this
	// multiple of it (or above) was measured; otherwise the throughput
	// may still be rising beyond the highest step probed.
	EstablishedFactor = 1.25
	// MinFitSteps and MinR2: the USL is fitted on at least this many steps
	// without rejections, and a fit whose r² (on throughput) is below
	// MinR2 fits badly.
	MinFitSteps = 3
	MinR2       = 0.9
)

// Result is a probe's measured steps and their analysis, with the plan it
// followed. Its JSON is loadlab probe --json and probe.json.
type Result struct {
	Plan            Plan      `json:"plan"`
	StartedAt       time.Time `json:"started_at"`
	DurationSeconds float64   `json:"duration_seconds"`
	// StoppedEarly is set, with StopReason, when planned steps were left
	// out: a stop limit crossed, the max duration reached, interrupted.
	StoppedEarly bool   `json:"stopped_early"`
	StopReason   string `json:"stop_reason,omitempty"`
	// Partial is set when the probe was interrupted.
	Partial bool `json:"partial"`
	Analysis
	Steps []Step `json:"steps"`
}

func (r *Result) stop(reason string) {
	r.StoppedEarly, r.StopReason = true, reason
}

// Errors is how many measured requests, over all steps, ended in an error
// (a transport error, or a status neither ok nor a rejection).
func (r Result) Errors() int {
	n := 0
	for _, s := range r.Steps {
		n += s.Errors
	}
	return n
}

// Analysis is what the steps say about the target.
type Analysis struct {
	// ServiceTimeSeconds is the median latency of the successes at the
	// lowest concurrency probed (ServiceTimeConcurrency): the service
	// time at low load, the client's round trip included.
	ServiceTimeSeconds     *float64 `json:"service_time_seconds"`
	ServiceTimeConcurrency int      `json:"service_time_concurrency"`
	// PlateauPerSecond is the median successes per second of the
	// PlateauSteps: the steps within PlateauBand of the highest.
	PlateauPerSecond float64 `json:"plateau_per_second"`
	PlateauSteps     []int   `json:"plateau_steps"`
	// Knee is the smallest concurrency reaching KneeFraction of the
	// plateau, null with KneeReason when the plateau is not established.
	Knee       *int   `json:"knee"`
	KneeReason string `json:"knee_reason,omitempty"`
	// RejectionsBeginAt is the lowest concurrency at which a request
	// completing in the window was rejected (503, 429), null if none was.
	RejectionsBeginAt *int `json:"rejections_begin_at"`
	USL               USL  `json:"usl"`
	// Notes qualify the figures (a service time read above concurrency
	// 1, a plateau at the probe's own rate limit).
	Notes []string `json:"notes,omitempty"`
}

// Analyse computes the analysis of steps (in any order). It is pure.
func Analyse(steps []Step) Analysis {
	a := Analysis{PlateauSteps: []int{}}
	steps = slices.SortedFunc(slices.Values(steps), func(x, y Step) int { return cmp.Compare(x.Concurrency, y.Concurrency) })
	if len(steps) == 0 {
		a.KneeReason = "no step measured"
		a.USL = USL{Reason: "no step measured", StepsFitted: []int{}}
		return a
	}
	low := steps[0]
	a.ServiceTimeSeconds, a.ServiceTimeConcurrency = low.P50Seconds, low.Concurrency
	if low.Concurrency > 1 {
		a.Notes = append(a.Notes, fmt.Sprintf("service time read at concurrency %d, not 1: it may include queueing", low.Concurrency))
	}
	a.PlateauPerSecond, a.PlateauSteps = plateau(steps)
	a.Knee, a.KneeReason = knee(steps, a.PlateauPerSecond)
	for _, s := range steps {
		if s.Rejected > 0 {
			a.RejectionsBeginAt = &s.Concurrency
			break
		}
	}
	// A plateau step at the rate limit whose requests were mostly
	// successes may be the limiter's plateau; one spent on a refused
	// user's quick retries (the 13th writer's 503s) is not.
	var limited []int
	for _, s := range steps {
		if s.AtRateLimit && 2*s.OK > s.Requests && slices.Contains(a.PlateauSteps, s.Concurrency) {
			limited = append(limited, s.Concurrency)
		}
	}
	if len(limited) > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("steps %v of the plateau ran at 90%% or more of --max-rate: the plateau may be the probe's limit, not the target's", limited))
	}
	var n, x []float64
	for _, s := range steps {
		if s.Rejected == 0 && s.OKPerSecond > 0 {
			n, x = append(n, float64(s.Concurrency)), append(x, s.OKPerSecond)
		}
	}
	a.USL = FitUSL(n, x)
	return a
}

// plateau returns the median successes per second of the steps within
// PlateauBand of the highest, and their concurrencies.
func plateau(steps []Step) (float64, []int) {
	top := 0.0
	for _, s := range steps {
		top = max(top, s.OKPerSecond)
	}
	set := []int{}
	if top <= 0 {
		return 0, set
	}
	var v []float64
	for _, s := range steps {
		if s.OKPerSecond >= PlateauBand*top {
			v = append(v, s.OKPerSecond)
			set = append(set, s.Concurrency)
		}
	}
	return median(v), set
}

// knee returns the smallest concurrency reaching KneeFraction of the
// plateau p, or nil and why, when no step at EstablishedFactor times it
// was measured. steps are sorted by concurrency.
func knee(steps []Step, p float64) (*int, string) {
	if p <= 0 {
		return nil, "no step had a success"
	}
	highest := steps[len(steps)-1]
	for _, s := range steps {
		if s.OKPerSecond < KneeFraction*p {
			continue
		}
		k := s.Concurrency
		if float64(highest.Concurrency) >= EstablishedFactor*float64(k) {
			return &k, ""
		}
		if k == highest.Concurrency {
			return nil, fmt.Sprintf("throughput still rising at the highest step probed (concurrency %d, %.4g/s)", k, highest.OKPerSecond)
		}
		return nil, fmt.Sprintf("plateau not established: %d reaches %.0f%% of it, but no step at %g × %d or above was probed (highest %d)",
			k, 100*KneeFraction, EstablishedFactor, k, highest.Concurrency)
	}
	return nil, "no step reached the plateau" // unreachable: the plateau's own steps reach it
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Sorted(slices.Values(v))
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
