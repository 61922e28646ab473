package budgets

import (
	"fmt"
	"math"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// Vegas is the latency-based adaptive concurrency limit of Netflix's
// concurrency-limits (VegasLimit, fed by WindowedLimit with an average
// sample window): calls are gathered in windows of Window calls; each
// window gives its mean round-trip time (undropped calls only), the most
// calls it saw in flight, and whether any call was dropped. The lowest
// window RTT is the no-load RTT; the queue the limit builds at the
// dependency is estimated as ⌈limit × (1 − noLoad ÷ rtt)⌉, and:
//
//	a drop                        limit − log10(limit)
//	in flight × 2 < limit         unchanged (the limit is not in use)
//	queue ≤ Threshold             limit + Beta
//	queue < Alpha                 limit + log10(limit)
//	queue > Beta                  limit − log10(limit)
//	otherwise                     unchanged
//
// kept within [Floor, Ceiling], where log10(n) is Netflix's integer
// max(1, ⌊log10 n⌋) (1 below 100). A window that sets a new lowest RTT only
// records it. Every Probe × limit windows the no-load RTT is measured again
// (set to the next window's RTT), so a dependency that became slower for
// good is not held to its old RTT for ever (Netflix jitters this count; we
// do not, so runs are repeatable). Netflix's Alpha, Beta and Threshold are
// 3, 6 and 1 × log10(limit): 3, 6 and 1 below a limit of 100. They are
// queued calls at the dependency, so, as with AIMD's floor and ceiling,
// loadlab has no defaults of its own here: they come from the dependency.
// Note that the ceiling makes any RTT above the lowest a queue of at least
// 1: with Alpha ≤ 1 and Threshold 0 a limit whose RTT is a hair above the
// lowest never grows.
//
// Netflix's limiter (and failsafe-go's) takes the time from the permit; the
// budget instead gives the time from the request written to the first
// response byte (not the permit wait, nor connecting).
type Vegas struct {
	// Initial is the limit at the start (in [Floor, Ceiling]).
	Initial int `json:"initial" yaml:"initial"`
	// Floor and Ceiling bound the limit (1 ≤ Floor ≤ Ceiling).
	Floor   int `json:"floor" yaml:"floor"`
	Ceiling int `json:"ceiling" yaml:"ceiling"`
	// Alpha and Beta are queued calls: the limit grows below Alpha and
	// shrinks above Beta (0 ≤ Alpha ≤ Beta); at or below Threshold (≤ Alpha)
	// it grows by Beta.
	Alpha     int `json:"alpha" yaml:"alpha"`
	Beta      int `json:"beta" yaml:"beta"`
	Threshold int `json:"threshold" yaml:"threshold"`
	// Window is the calls per update (≥ 1; Netflix: at least 10).
	Window int `json:"window" yaml:"window"`
	// Probe re-measures the no-load RTT every Probe × limit windows (≥ 1;
	// Netflix: 30).
	Probe int `json:"probe" yaml:"probe"`
}

// DefaultVegasProbe is Netflix VegasLimit's probe multiplier.
const DefaultVegasProbe = 30

// Validate names the first bad field.
func (v Vegas) Validate() error {
	switch {
	case v.Floor < 1:
		return fmt.Errorf("floor: %d must be ≥ 1", v.Floor)
	case v.Ceiling < v.Floor:
		return fmt.Errorf("ceiling: %d must be ≥ the floor, %d", v.Ceiling, v.Floor)
	case v.Initial < v.Floor || v.Initial > v.Ceiling:
		return fmt.Errorf("initial: %d must be in [floor %d, ceiling %d]", v.Initial, v.Floor, v.Ceiling)
	case v.Alpha < 0:
		return fmt.Errorf("alpha: %d must be ≥ 0", v.Alpha)
	case v.Beta < v.Alpha:
		return fmt.Errorf("beta: %d must be ≥ alpha, %d", v.Beta, v.Alpha)
	case v.Threshold < 0 || v.Threshold > v.Alpha:
		return fmt.Errorf("threshold: %d must be in [0, alpha %d]", v.Threshold, v.Alpha)
	case v.Window < 1:
		return fmt.Errorf("window: %d must be ≥ 1 call", v.Window)
	case v.Probe < 1:
		return fmt.Errorf("probe: %d must be ≥ 1", v.Probe)
	}
	return nil
}

// VegasState is what the rule carries from one window to the next.
type VegasState struct {
	// Limit is the estimated limit (the limit in force is its integer part).
	Limit float64
	// NoLoad is the lowest window RTT since the last probe (0: none yet).
	NoLoad time.Duration
	// Windows counts windows since the last probe.
	Windows int
}

// VegasWindow is one window's calls.
type VegasWindow struct {
	// RTT is the mean round-trip time of its undropped calls (0: none).
	RTT time.Duration
	// MaxInFlight is the most calls in flight as one of them was sent.
	MaxInFlight int
	// Dropped is whether any was dropped (a rejection or a call timeout).
	Dropped bool
}

// Update is the state after window w: the published rule, pure.
func (v Vegas) Update(s VegasState, w VegasWindow) VegasState {
	s.Windows++
	if float64(s.Windows) >= float64(v.Probe)*s.Limit && w.RTT > 0 {
		s.Windows, s.NoLoad = 0, w.RTT
		return s
	}
	if w.RTT > 0 && (s.NoLoad == 0 || w.RTT < s.NoLoad) {
		s.NoLoad = w.RTT
		return s
	}
	limit := s.Limit
	switch {
	case w.Dropped:
		limit -= log10Int(limit)
	case w.RTT == 0 || float64(w.MaxInFlight)*2 < limit:
		return s
	default:
		queue := int(math.Ceil(limit * (1 - float64(s.NoLoad)/float64(w.RTT))))
		switch {
		case queue <= v.Threshold:
			limit += float64(v.Beta)
		case queue < v.Alpha:
			limit += log10Int(limit)
		case queue > v.Beta:
			limit -= log10Int(limit)
		default:
			return s
		}
	}
	s.Limit = math.Min(float64(v.Ceiling), math.Max(float64(v.Floor), limit))
	return s
}

// log10Int is Netflix's Log10RootFunction: max(1, ⌊log10 n⌋).
func log10Int(n float64) float64 { return math.Max(1, math.Floor(math.Log10(n))) }

func (v Vegas) start() int { return v.Initial }

// usesRTT: the Vegas rule reads each window's RTT.
func (v Vegas) usesRTT() bool { return true }

func (v Vegas) rule() rule {
	return &vegasRule{v: v, s: VegasState{Limit: float64(v.Initial)}}
}

// vegasRule gathers calls into windows and updates at each window's end.
type vegasRule struct {
	v         Vegas
	s         VegasState
	calls     int
	rttSum    time.Duration
	rttCalls  int
	maxFlight int
	dropped   bool
}

func (r *vegasRule) next(_ int, o Outcome) int {
	r.calls++
	r.maxFlight = max(r.maxFlight, o.InFlight)
	if o.Dropped {
		r.dropped = true
	} else if o.RTT > 0 {
		r.rttSum += o.RTT
		r.rttCalls++
	}
	if r.calls >= r.v.Window {
		w := VegasWindow{MaxInFlight: r.maxFlight, Dropped: r.dropped}
		if r.rttCalls > 0 {
			w.RTT = r.rttSum / time.Duration(r.rttCalls)
		}
		r.s = r.v.Update(r.s, w)
		*r = vegasRule{v: r.v, s: r.s}
	}
	return int(r.s.Limit)
}

// rttTrace times an HTTP call from the request written in full to the
// first response byte; its hooks may run on the transport's goroutines.
type rttTrace struct{ wrote, first atomic.Int64 }

func (t *rttTrace) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				t.wrote.Store(time.Now().UnixNano())
			}
		},
		GotFirstResponseByte: func() { t.first.Store(time.Now().UnixNano()) },
	}
}

// get is the traced RTT, or the call's own time when the call was not
// traced (t is nil), made no HTTP request, or its hooks did not both run.
func (t *rttTrace) get(call time.Duration) time.Duration {
	if t == nil {
		return call
	}
	w, f := t.wrote.Load(), t.first.Load()
	if w == 0 || f < w {
		return call
	}
	return time.Duration(f - w)
}
