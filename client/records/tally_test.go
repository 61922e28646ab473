package records

import (
	"math"
	"testing"
	"time"
)

// Events fall in the phase whose [start, end) holds their time; from the
// end of the last phase, in the drain.
func TestPhaseBoundaries(t *testing.T) {
	cfg := Config{TimeScale: 0.1, Duration: 3 * time.Second,
		Phases: []Phase{{"a", time.Second}, {"b", 1500 * time.Millisecond}, {"c", 500 * time.Millisecond}}}
	tl := newTally(cfg, time.Now())
	for at, want := range map[float64]int{0: 0, 0.999: 0, 1: 1, 2.4999: 1, 2.5: 2, 2.9999: 2, 3: 3, 7: 3} {
		if got := tl.phase(at); got != want {
			t.Errorf("phase(%v) = %d, want %d", at, got, want)
		}
	}
	// A record begun at the very deadline (rounding) still counts in the last phase.
	tl.begin(300 * time.Millisecond)
	if tl.phases[2].begun != 1 || tl.phases[3].begun != 0 {
		t.Errorf("begun %+v", tl.phases)
	}
}

// counted: a drain phase only when records ended after the last phase; a
// run that ended early cuts its phases at its end; seconds cover the run.
func TestCountedPhases(t *testing.T) {
	cfg := Config{TimeScale: 0.1, Records: MaxRecords, Duration: 2 * time.Second,
		Phases: []Phase{{"a", time.Second}, {"b", time.Second}}}
	tl := newTally(cfg, time.Now())
	tl.phases[0].ended, tl.phases[0].accepted, tl.phases[1].ended, tl.phases[2].ended = 4, 4, 2, 1
	tl.phases[2].accepted, tl.lastEnd = 1, 2.5
	c := tl.counted(cfg, 260*time.Millisecond)
	if len(c.phases) != 3 || c.phases[2].Name != DrainPhase || c.phases[2].Start != 2 || c.phases[2].End != 2.5 ||
		c.phases[2].AcceptedPerLabSecond != 2 || c.phases[0].AcceptedPerLabSecond != 4 || len(c.perSecond) != 3 {
		t.Errorf("drain: %+v; %d seconds", c.phases, len(c.perSecond))
	}
	// Ended at 1.5 lab s (records cap), nothing after the phases.
	tl = newTally(cfg, time.Now())
	tl.phases[0].ended, tl.lastEnd = 3, 1.5
	c = tl.counted(cfg, 150*time.Millisecond)
	if len(c.phases) != 2 || c.phases[0].End != 1 || c.phases[1].Start != 1 || math.Abs(c.phases[1].End-1.5) > 1e-9 || len(c.perSecond) != 2 {
		t.Errorf("early end: %+v; %d seconds", c.phases, len(c.perSecond))
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	tl := newTally(Config{TimeScale: 1, Duration: time.Hour, Phases: []Phase{{"a", time.Hour}}}, time.Now())
	p := &tl.phases[0]
	for i := 1; i <= 100; i++ {
		p.recordLatency(float64(i))
	}
	got := p.percentiles()
	near := func(a, b float64) bool { return math.Abs(a-b) <= b/1000 } // HDR: 3 significant digits
	if !near(got.P50, 50) || !near(got.P95, 95) || !near(got.P99, 99) || got.Max != 100 {
		t.Errorf("percentiles of 1..100 ms: %+v", got)
	}
}
