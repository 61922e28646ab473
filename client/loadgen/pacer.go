package loadgen

import (
	"context"
	"time"
)

// Pacer says when each arrival of an open schedule is due, computed as it
// is asked for, so the schedule is never built (after vegeta's Pacer).
type Pacer interface {
	// Due returns the offset from the start of the run at which arrival
	// number hit (from 0) is due, or false when the schedule has no such
	// arrival.
	Due(hit int) (offset time.Duration, ok bool)
}

// RampPacer is the open schedule: Rate(t) arrivals in second t, all at
// its start (ArrivalsStep) or evenly spaced over it (ArrivalsUniform);
// Unit is one model second in real time.
type RampPacer struct {
	Schedule Schedule
	Mode     Arrivals
	Unit     time.Duration
}

var _ Pacer = RampPacer{}

// segments are the ramp's stretches of constant rate: before, during and
// after the peak, clipped to the run.
func (p RampPacer) segments() [3]struct{ from, to, rate int } {
	sc := p.Schedule
	end := sc.Duration
	rampStart, rampEnd := min(sc.RampStart, end), min(max(sc.RampEnd, sc.RampStart), end)
	return [3]struct{ from, to, rate int }{
		{0, rampStart, sc.BaseRate}, {rampStart, rampEnd, sc.PeakRate}, {rampEnd, end, sc.BaseRate},
	}
}

// Len is how many arrivals the schedule has, as a float64 so that it
// cannot overflow whatever the rates.
func (p RampPacer) Len() float64 {
	n := 0.0
	for _, seg := range p.segments() {
		if seg.rate > 0 && seg.to > seg.from {
			n += float64(seg.to-seg.from) * float64(seg.rate)
		}
	}
	return n
}

// Due implements Pacer. The ramp has at most three segments of constant
// rate (before, during and after the peak), so Due takes constant time.
func (p RampPacer) Due(hit int) (time.Duration, bool) {
	if hit < 0 {
		return 0, false
	}
	for _, seg := range p.segments() {
		if seg.rate <= 0 || seg.to <= seg.from {
			continue
		}
		// Past this segment? Compared by division so that a long, fast
		// segment cannot overflow; then (to-from)*rate ≤ hit fits.
		if hit/seg.rate >= seg.to-seg.from {
			hit -= (seg.to - seg.from) * seg.rate
			continue
		}
		second, j := seg.from+hit/seg.rate, hit%seg.rate
		off := time.Duration(second) * p.Unit
		if p.Mode == ArrivalsUniform {
			off += time.Duration(j) * p.Unit / time.Duration(seg.rate)
		}
		return off, true
	}
	return 0, false
}

// Clock is the generator's time source. Tests drive the generator with a
// clock that wakes late; SleepUntil returns early with ctx's error.
type Clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RealClock is the wall clock.
var RealClock Clock = realClock{}
