package records

import (
	"context"
	"maps"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/budgets"
)

// tally counts a run's records as they go: in flight, by terminal state,
// the ids of writes of unknown outcome and, in a time-bounded run, events
// by lab second and, with phases, by phase. Times are lab seconds from the
// clock's start, read under the lock, so that events are counted in the
// order of their times.
type tally struct {
	mu            sync.Mutex
	start         time.Time
	scale         float64
	timed, phased bool

	active, peak int
	states       map[State]int
	unknown      []string

	seconds []SecondCounts
	lastEnd float64 // lab seconds of the last record's end
	// ends[k] is the end of phase k; phases has one more, the drain.
	ends   []float64
	phases []phaseTally
	// writes is the calls to the write's dependency in flight, and
	// writesPhase the phase of the last change.
	writes, writesPhase int
}

type phaseTally struct {
	begun, ended, accepted, rejections, peakWrites int
	states                                         map[State]int
	latency                                        *hdrhistogram.Histogram // lab µs
	maxMs                                          float64
}

// Record latencies are recorded in lab microseconds, from 1 µs to one
// hour, to 3 significant digits.
const (
	latencyLowest  = 1
	latencyHighest = int64(time.Hour / time.Microsecond)
	latencyDigits  = 3
)

func newTally(cfg Config, start time.Time) *tally {
	t := &tally{start: start, scale: cfg.TimeScale, timed: cfg.Duration > 0, phased: len(cfg.Phases) > 0, states: map[State]int{}}
	var sum time.Duration
	for _, p := range cfg.Phases {
		sum += p.Duration
		t.ends = append(t.ends, sum.Seconds())
	}
	if t.phased {
		t.phases = make([]phaseTally, len(cfg.Phases)+1)
	}
	return t
}

// now is the lab time. Call it with the lock held.
func (t *tally) now() float64 { return time.Since(t.start).Seconds() / t.scale }

// phase is the index of the phase whose [start, end) holds lab time at:
// the drain's, len(t.ends), from the end of the last phase.
func (t *tally) phase(at float64) int {
	return sort.Search(len(t.ends), func(k int) bool { return t.ends[k] > at })
}

// second is the counts of the lab second holding lab time at.
func (t *tally) second(at float64) *SecondCounts {
	i := max(int(at), 0)
	for len(t.seconds) <= i {
		t.seconds = append(t.seconds, SecondCounts{T: len(t.seconds)})
	}
	return &t.seconds[i]
}

func (t *tally) inFlight() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active
}

// begin counts a record begun at real time at since the start, and
// returns that time in lab seconds.
func (t *tally) begin(at time.Duration) float64 {
	lab := at.Seconds() / t.scale
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active++
	t.peak = max(t.peak, t.active)
	if t.phased {
		// Records begin before the duration only, whatever the rounding.
		t.phases[min(t.phase(lab), len(t.ends)-1)].begun++
	}
	return lab
}

// end counts a record, with its id, that began at lab time began and has
// just ended in state st.
func (t *tally) end(st State, id string, began float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	t.states[st]++
	if st == WriteUnknown && len(t.unknown) < MaxUnknownListed {
		t.unknown = append(t.unknown, id)
	}
	if !t.timed {
		return
	}
	now := t.now()
	accepted := 0
	if st == Complete || st == Incomplete {
		accepted = 1
	}
	t.lastEnd = max(t.lastEnd, now)
	s := t.second(now)
	s.Ended++
	s.Accepted += accepted
	if !t.phased {
		return
	}
	p := &t.phases[t.phase(now)]
	p.ended++
	p.accepted += accepted
	if p.states == nil {
		p.states = map[State]int{}
	}
	p.states[st]++
	p.recordLatency((now - began) * 1000)
}

// recordLatency records a record's latency in lab ms, clamped to the
// histogram's range (the maximum is kept exact).
func (p *phaseTally) recordLatency(ms float64) {
	if p.latency == nil {
		p.latency = hdrhistogram.New(latencyLowest, latencyHighest, latencyDigits)
	}
	_ = p.latency.RecordValue(min(max(int64(math.Round(ms*1000)), latencyLowest), latencyHighest))
	p.maxMs = max(p.maxMs, ms)
}

// writeRejected counts a call to the write's dependency answered just now
// with a rejection.
func (t *tally) writeRejected() {
	if !t.timed {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.second(now).WriteRejections++
	if t.phased {
		t.phases[t.phase(now)].rejections++
	}
}

// countWrites wraps a call to the write's dependency so that the tally
// counts it in flight while it runs (a phased run's peak per phase).
func (t *tally) countWrites(call budgets.Call) budgets.Call {
	if !t.phased {
		return call
	}
	return func(ctx context.Context) (int, error) {
		t.writesInFlight(1)
		defer t.writesInFlight(-1)
		return call(ctx)
	}
}

func (t *tally) writesInFlight(delta int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.phase(t.now())
	// The writes in flight at a phase's start count in its peak.
	for t.writesPhase < k {
		t.writesPhase++
		p := &t.phases[t.writesPhase]
		p.peakWrites = max(p.peakWrites, t.writes)
	}
	t.writes += delta
	t.phases[k].peakWrites = max(t.phases[k].peakWrites, t.writes)
}

// percentiles summarises the phase's record latencies in lab ms: quantiles
// by nearest rank, the value at rank ceil(q·n), to HDR's precision (never
// above the exact maximum).
func (p *phaseTally) percentiles() Percentiles {
	if p.latency == nil || p.latency.TotalCount() == 0 {
		return Percentiles{}
	}
	n := float64(p.latency.TotalCount())
	q := func(f float64) float64 {
		us := p.latency.ValueAtPercentile(100 * math.Ceil(f*n) / n)
		return min(float64(us)/1000, p.maxMs)
	}
	return Percentiles{P50: q(0.5), P95: q(0.95), P99: q(0.99), Max: p.maxMs}
}

// counts is what a tally counted by a run's end, as values: records by
// terminal state, their peak in flight, the ids of writes of unknown
// outcome (empty, not nil, when none) and, in a time-bounded run, every
// lab second of its span and, with phases, each phase's figures (then the
// drain's, when records ended after the last phase).
type counts struct {
	states    map[State]int
	peak      int
	unknown   []string
	perSecond []SecondCounts
	phases    []PhaseResult
}

// counted returns what the tally counted in a run of cfg that lasted
// elapsed (real time).
func (t *tally) counted(cfg Config, elapsed time.Duration) counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := counts{states: maps.Clone(t.states), peak: t.peak, unknown: append([]string{}, t.unknown...)}
	if cfg.Duration <= 0 {
		return c
	}
	// The run's span in lab seconds: its duration and drain, or up to its
	// end when it ended early.
	limit := cfg.Duration.Seconds()
	span := min(elapsed.Seconds()/cfg.TimeScale, limit)
	if t.lastEnd >= limit {
		span = t.lastEnd
	}
	c.perSecond = make([]SecondCounts, max(int(math.Ceil(span)), len(t.seconds)))
	for i := range c.perSecond {
		if i < len(t.seconds) {
			c.perSecond[i] = t.seconds[i]
		}
		c.perSecond[i].T = i
	}
	c.phases = t.phaseResults(cfg.Phases, limit, span)
	return c
}

// phaseResults is each phase's figures, of phases that end a run limit
// lab seconds long over span, then the drain's when records ended after
// the last phase; nil without phases. Call it with the lock held.
func (t *tally) phaseResults(phases []Phase, limit, span float64) []PhaseResult {
	if len(phases) == 0 {
		return nil
	}
	var out []PhaseResult
	for k, p := range t.phases {
		var pr PhaseResult
		switch {
		case k < len(phases):
			pr = PhaseResult{Name: phases[k].Name, End: t.ends[k]}
			if k > 0 {
				pr.Start = t.ends[k-1]
			}
			pr.End = max(pr.Start, min(pr.End, span))
		case p.ended > 0: // drain: records that ended after the last phase
			pr = PhaseResult{Name: DrainPhase, Start: limit, End: t.lastEnd}
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
		out = append(out, pr)
	}
	return out
}
