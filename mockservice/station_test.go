package mockservice_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// The station's timing is the subject of these tests, so they run in a
// synctest bubble: fake time, exact durations, no margins.

// station is a records station of the given shape with a fixed service time.
func station(t *testing.T, workers, queue int, d time.Duration, cancel bool, tie time.Duration) *mockservice.Station {
	t.Helper()
	s, err := mockservice.NewStation(api.Records, config.Station{Workers: workers, Queue: queue, RejectStatus: 503,
		CancelOnDisconnect: cancel, TieWindow: tie}, latency.Fixed{D: d}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// async runs one request at the station in the background; its result comes
// on the returned channel.
func async(s *mockservice.Station, ctx context.Context, id string) <-chan mockservice.Result {
	out := make(chan mockservice.Result, 1)
	go func() { out <- s.Do(ctx, id) }()
	return out
}

// Requests are served in arrival order, each waiting exactly for those
// before it.
func TestStationIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := station(t, 1, config.UnboundedQueue, 40*time.Millisecond, false, 0)
		var got []<-chan mockservice.Result
		for range 6 {
			got = append(got, async(s, context.Background(), ""))
			synctest.Wait() // admitted (served or queued) before the next arrives
		}
		if st := s.Stats(); st.Busy != 1 || st.QueueLength != 5 || st.HighWater.Queue != 5 {
			t.Errorf("busy %d, queue %d (high water %d); want 1 and 5 waiting", st.Busy, st.QueueLength, st.HighWater.Queue)
		}
		for i, c := range got {
			r := <-c
			if want := time.Duration(i) * 40 * time.Millisecond; r.Outcome != api.OutcomeServed || r.QueueWait != want || r.Service != 40*time.Millisecond {
				t.Errorf("request %d: %s after %v in the queue, served %v; want served after %v, for 40ms", i, r.Outcome, r.QueueWait, r.Service, want)
			}
		}
	})
}

// A client that leaves while queued is still served: the work is done and
// all of it counts as wasted.
func TestStationServesAfterTheClientLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := station(t, 1, config.UnboundedQueue, 200*time.Millisecond, false, 0)
		first := async(s, context.Background(), "")
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r := s.Do(ctx, "")
		if r.Outcome != api.OutcomeServedAfterClientLeft || r.QueueWait != 200*time.Millisecond || r.Service != 200*time.Millisecond {
			t.Errorf("impatient request: %+v; want served after the client left, after 200 ms in the queue", r)
		}
		<-first
		st := s.Stats()
		if st.Requests[api.OutcomeServed] != 1 || st.Requests[api.OutcomeServedAfterClientLeft] != 1 || st.WastedSeconds != 0.2 {
			t.Errorf("requests %v, wasted %v s; want 1 served, 1 after the client left, 0.2 s wasted", st.Requests, st.WastedSeconds)
		}
	})
}

// With cancel-on-disconnect, a client leaving from the queue drops its
// work: nothing is wasted and the next request waits only for the first.
func TestStationCancelsOnDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := station(t, 1, config.UnboundedQueue, 200*time.Millisecond, true, 0)
		first := async(s, context.Background(), "")
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if r := s.Do(ctx, ""); r.Outcome != api.OutcomeCancelled || r.QueueWait != 50*time.Millisecond {
			t.Errorf("impatient request: %+v; want cancelled after 50 ms", r)
		}
		if r := s.Do(context.Background(), ""); r.Outcome != api.OutcomeServed || r.QueueWait != 150*time.Millisecond {
			t.Errorf("next request: %+v; want served after the first's remaining 150 ms", r)
		}
		<-first
		st := s.Stats()
		if st.Requests[api.OutcomeServed] != 2 || st.Requests[api.OutcomeCancelled] != 1 || st.WastedSeconds != 0 {
			t.Errorf("requests %v, wasted %v s; want 2 served, 1 cancelled, none wasted", st.Requests, st.WastedSeconds)
		}
	})
}

// A request arriving at a full station 15 ms before a planned completion is
// refused without a tie window and, with a 30 ms window, admitted at the
// moment the completion frees the worker.
func TestStationTieWindow(t *testing.T) {
	for _, tt := range []struct {
		window time.Duration
		want   api.Outcome
		wait   time.Duration
	}{{0, api.OutcomeRejected, 0}, {30 * time.Millisecond, api.OutcomeServed, 15 * time.Millisecond}} {
		synctest.Test(t, func(t *testing.T) {
			s := station(t, 1, 0, 100*time.Millisecond, false, tt.window)
			first := async(s, context.Background(), "")
			time.Sleep(85 * time.Millisecond)
			// The waiter and the completion wake at the same fake instant in
			// either order; a waiter that finds the worker still held looks
			// again 100 µs later.
			if r := s.Do(context.Background(), ""); r.Outcome != tt.want || r.QueueWait < tt.wait || r.QueueWait > tt.wait+100*time.Microsecond {
				t.Errorf("tie window %v: %s after %v, want %s after %v (+100 µs)", tt.window, r.Outcome, r.QueueWait, tt.want, tt.wait)
			}
			<-first
		})
	}
}

// A full station refuses at once, and the refusal is counted, never served.
func TestStationRefusesWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := station(t, 2, 1, time.Second, false, 0)
		var held []<-chan mockservice.Result
		for range 3 {
			held = append(held, async(s, context.Background(), ""))
		}
		synctest.Wait()
		start := time.Now()
		if r := s.Do(context.Background(), ""); r.Outcome != api.OutcomeRejected || time.Since(start) != 0 {
			t.Errorf("fourth request: %s after %v, want rejected at once", r.Outcome, time.Since(start))
		}
		for _, c := range held {
			<-c
		}
		st := s.Stats()
		if st.Requests[api.OutcomeServed] != 3 || st.Requests[api.OutcomeRejected] != 1 || st.HighWater.Busy != 2 || st.HighWater.Queue != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// Offered concurrency counts every open request, refusals included, and
// falls back when they leave.
func TestStationOfferedConcurrency(t *testing.T) {
	s := station(t, 1, 0, time.Millisecond, false, 0)
	var leave []func()
	for range 4 {
		leave = append(leave, s.Open())
	}
	for _, l := range leave {
		l()
	}
	if st := s.Stats(); st.Offered != 0 || st.HighWater.Offered != 4 {
		t.Errorf("offered %d, high water %d; want 0 and 4", st.Offered, st.HighWater.Offered)
	}
}

// The request log keeps when each named request arrived, started and
// finished, and how it ended; unnamed requests are not logged.
func TestStationRequestLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := station(t, 1, 0, 30*time.Millisecond, false, 0)
		log := mockservice.NewRequestLog(10)
		s.SetRequestLog(log)
		t0 := time.Now()
		first := async(s, context.Background(), "first")
		synctest.Wait()
		s.Do(context.Background(), "refused") // one worker, no queue
		<-first
		s.Do(context.Background(), "") // not logged
		snap := log.Snapshot()
		if len(snap.Entries) != 2 {
			t.Fatalf("entries %+v, want 2", snap.Entries)
		}
		f, r := snap.Entries[0], snap.Entries[1]
		if f.ID != "first" || f.Outcome != api.OutcomeServed || !f.Arrived.Equal(t0) || !f.Started.Equal(t0) || !f.Finished.Equal(t0.Add(30*time.Millisecond)) {
			t.Errorf("first: %+v", f)
		}
		if r.ID != "refused" || r.Outcome != api.OutcomeRejected || r.Started != nil || !r.Finished.Equal(t0) {
			t.Errorf("refused: %+v", r)
		}
	})
}

// Reset zeroes the counters and re-seeds the service times: the draws after
// a reset with the same seed are the first run's again, with another seed
// others; the station counts its draws and their sum in lab seconds.
func TestStationResetReseeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := mockservice.NewStation(api.Enrichment, config.Station{Workers: 1, Queue: config.UnboundedQueue, RejectStatus: 503},
			latency.Uniform{Min: time.Millisecond, Max: time.Second}, 7, 1)
		if err != nil {
			t.Fatal(err)
		}
		draw := func() (out []time.Duration) {
			for range 5 {
				out = append(out, s.Do(context.Background(), "").Planned)
			}
			return out
		}
		a := draw()
		var sum time.Duration
		for _, d := range a {
			sum += d
		}
		if st := s.Stats(); st.Draws != 5 || math.Abs(st.PlannedLabSeconds-sum.Seconds()) > 1e-9 {
			t.Errorf("draws %d planned %v s, want 5 and %v s", st.Draws, st.PlannedLabSeconds, sum.Seconds())
		}
		s.Reset(7)
		if st := s.Stats(); st.Requests[api.OutcomeServed] != 0 || st.Draws != 0 || st.PlannedLabSeconds != 0 {
			t.Errorf("after reset: %+v", st)
		}
		b := draw()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("draws %v, after reset %v", a, b)
			}
		}
		if a[0] == a[1] {
			t.Errorf("draws %v do not vary", a)
		}
		s.Reset(8)
		if c := draw(); slices.Equal(a, c) {
			t.Errorf("seed 8 draws %v, the same as seed 7", c)
		}
	})
}
