package mockservice

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// A station that releases a worker it does not hold has lost count of its
// workers: it panics with a message rather than serving on wrong figures.
func TestReleasingMoreThanHeldPanics(t *testing.T) {
	s, err := NewStation(api.Records, config.Station{Workers: 1, Queue: 0, RejectStatus: 503}, latency.Fixed{D: time.Millisecond}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "released more workers than it holds") {
			t.Errorf("recovered %q, want the station's own panic", msg)
		}
	}()
	now := time.Now()
	s.release(now, now)
}

// A worker handed over at its predecessor's planned end goes to a waiter
// that arrived before that end at the end, and to one that arrived after it
// (in the predecessor's timer slack) at its arrival.
func TestHandoverNeverBeforeArrival(t *testing.T) {
	t0 := time.Now()
	for _, tt := range []struct {
		arrived, want time.Time
	}{
		{t0.Add(-time.Millisecond), t0},
		{t0, t0},
		{t0.Add(300 * time.Microsecond), t0.Add(300 * time.Microsecond)},
	} {
		s, err := NewStation(api.Records, config.Station{Workers: 1, Queue: 1, RejectStatus: 503}, latency.Fixed{D: time.Millisecond}, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		s.busy = 1
		w := &waiter{arrived: tt.arrived, ready: make(chan struct{})}
		s.queue.PushBack(w)
		s.release(t0, t0)
		<-w.ready
		if !w.start.Equal(tt.want) {
			t.Errorf("waiter arriving %v after the planned end started %v after it, want %v", tt.arrived.Sub(t0), w.start.Sub(t0), tt.want.Sub(t0))
		}
	}
}

// Real time, since timer lateness is the subject: a service of 3 ms ends
// later than planned by less with precise timers than on the runtime's
// timers (median of 40 services each, interleaved).
func TestPreciseTimersEndServicesSooner(t *testing.T) {
	over := map[bool][]time.Duration{}
	for i := range 80 {
		precise := i%2 == 0
		s, err := NewStation(api.Records, config.Station{Workers: 1, Queue: 0, RejectStatus: 503, PreciseTimers: precise},
			latency.Fixed{D: 3 * time.Millisecond}, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Do(context.Background(), "")
		over[precise] = append(over[precise], r.Service-r.Planned)
	}
	med := func(xs []time.Duration) time.Duration { slices.Sort(xs); return xs[len(xs)/2] }
	p, c := med(over[true]), med(over[false])
	t.Logf("median lateness: precise %v, runtime timers %v", p, c)
	if p >= c {
		t.Errorf("precise timers were no earlier: %v against %v", p, c)
	}
}
