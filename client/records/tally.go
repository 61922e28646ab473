package records

import (
	"context"
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
