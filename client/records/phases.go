package records

import (
	"context"
	"math"
	"net/url"
	"sync"
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

// waitStart waits for at, when it is not zero, unless ctx ends first, and
// returns the time the run's clock starts.
func waitStart(ctx context.Context, at time.Time) time.Time {
	for !at.IsZero() {
		d := time.Until(at) // by the wall clock: at comes from another process
		if d <= 0 {
			break
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return time.Now()
		case <-timer.C:
		}
	}
	return time.Now()
}

// issue begins records, each as a slot of the inFlight frees, until the
// records cap, the run's duration, Config.Stop or ctx ends it; it waits for every begun
// record to end and returns how many began. Once the duration has passed
// no record begins, whichever the loop was waiting for.
func (r *runner) issue(ctx context.Context, inFlight int) int {
	t := r.tally
	slots := make(chan struct{}, inFlight)
	limit := r.cfg.scaled(r.cfg.Duration)
	var deadline <-chan time.Time
	if r.cfg.Duration > 0 {
		timer := time.NewTimer(limit - time.Since(t.start))
		defer timer.Stop()
		deadline = timer.C
	}
	var wg sync.WaitGroup
	begun := 0
	for i := range r.cfg.Records {
		slot := false
		select {
		case <-ctx.Done():
		case <-r.cfg.Stop:
		case <-deadline:
		case slots <- struct{}{}:
			slot = true
		}
		at := time.Since(t.start)
		if !slot || ctx.Err() != nil || stopped(r.cfg.Stop) || (r.cfg.Duration > 0 && at >= limit) {
			if slot {
				<-slots
			}
			break
		}
		begun++
		wg.Go(func() {
			defer func() { <-slots }()
			began := t.begin(at)
			st, id := r.process(ctx, i)
			t.end(st, id, began)
		})
	}
	wg.Wait()
	return begun
}

// stopped says whether stop is closed (a nil stop never is).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// fill sets the result's records, states and, for a time-bounded run, its
// phases and seconds, from the tally of a run that began begun records and
// lasted elapsed (real time).
func (t *tally) fill(res *Result, cfg Config, begun int, elapsed time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Records, res.NotStarted = cfg.Records, cfg.Records-begun
	if cfg.Duration > 0 { // records that never began for want of time are not records
		res.Records, res.NotStarted = begun, 0
	}
	res.Complete, res.Incomplete = t.states[Complete], t.states[Incomplete]
	res.WriteRejected, res.StepRejected, res.Failed = t.states[WriteRejected], t.states[StepRejected], t.states[Failed]
	res.WriteUnknown, res.Interrupted = t.states[WriteUnknown], t.states[Interrupted]
	res.PeakRecordsInFlight, res.UnknownWrites = t.peak, t.unknown
	if res.UnknownWrites == nil {
		res.UnknownWrites = []string{}
	}
	if cfg.Duration <= 0 {
		return
	}
	res.DurationLimit = cfg.Duration.Seconds()
	res.RecordsCapReached = begun == cfg.Records
	// The run's span in lab seconds: its duration and drain, or up to its
	// end when it ended early.
	span := min(elapsed.Seconds()/cfg.TimeScale, res.DurationLimit)
	if t.lastEnd >= res.DurationLimit {
		span = t.lastEnd
	}
	n := max(int(math.Ceil(span)), len(t.seconds))
	res.PerSecond = make([]SecondCounts, n)
	for i := range res.PerSecond {
		if i < len(t.seconds) {
			res.PerSecond[i] = t.seconds[i]
		}
		res.PerSecond[i].T = i
	}
	if len(cfg.Phases) == 0 {
		return
	}
	for k, p := range t.phases {
		var pr PhaseResult
		switch {
		case k < len(cfg.Phases):
			pr = PhaseResult{Name: cfg.Phases[k].Name, End: t.ends[k]}
			if k > 0 {
				pr.Start = t.ends[k-1]
			}
			pr.End = max(pr.Start, min(pr.End, span))
		case p.ended > 0: // drain: records that ended after the last phase
			pr = PhaseResult{Name: DrainPhase, Start: res.DurationLimit, End: t.lastEnd}
		default:
			continue
		}
		pr.Begun, pr.Ended, pr.Accepted, pr.WriteRejections = p.begun, p.ended, p.accepted, p.rejections
		pr.PeakConcurrentWrites, pr.States, pr.LatencyMs = p.peakWrites, map[State]int{}, p.percentiles()
		for _, s := range States {
			if s != NotStarted {
				pr.States[s] = p.states[s]
			}
		}
		if d := pr.End - pr.Start; d > 0 {
			pr.AcceptedPerLabSecond = float64(pr.Accepted) / d
		}
		res.Phases = append(res.Phases, pr)
	}
}
