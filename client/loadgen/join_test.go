package loadgen

import (
	"reflect"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// The join is a pure function of the generator's records and the server's
// log; each case below is built by hand. One model second is one second
// here, and the server's clock runs 5 s ahead of ours.
func TestJoinGivesEveryRequestOneOutcome(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const skew = 5 * time.Second
	srv := func(s float64) *time.Time { v := at(s).Add(skew); return &v }
	req := func(id string, sched float64, reply Reply, replied float64) request {
		return request{id: id, scheduled: at(sched), sent: at(sched), reply: reply, replied: at(replied), deadline: at(sched + 2)}
	}
	reqs := []request{
		req("on-time", 0, ReplyOnTime, 0.5),
		req("on-time-2", 1, ReplyOnTime, 2.5),
		req("rejected", 1, ReplyRejected, 1),
		req("too-late", 2, ReplyGaveUp, 4),
		req("still-running", 2, ReplyGaveUp, 4),
		req("finished-after-end", 3, ReplyGaveUp, 5),
		req("not-in-log", 3, ReplyGaveUp, 5),
		req("error", 4, ReplyError, 4),
		req("pending", 5, ReplyPending, 6),
	}
	log := &api.RequestLogSnapshot{Entries: []api.RequestEntry{
		{ID: "too-late", Arrived: *srv(2), Started: srv(3), Finished: srv(4.5), Outcome: api.OutcomeServedAfterClientLeft},
		{ID: "still-running", Arrived: *srv(2), Started: srv(5)},
		{ID: "finished-after-end", Arrived: *srv(3), Started: srv(5), Finished: srv(7), Outcome: api.OutcomeServedAfterClientLeft},
	}}
	in := joinInput{start: t0, end: at(6), unit: time.Second, seconds: 6, requests: reqs,
		dropped: []time.Duration{time.Second, 1500 * time.Millisecond}, late: 1, maxLag: 120 * time.Millisecond,
		log: log, offset: skew, queue: []int{0, 2, 4, 4, 1, -1}, queueCap: 4, tieWindow: 0.1, timeScale: 1}
	res := join(in)

	want := Result{Requests: 9, OnTime: 2, Rejected: 1, TooLate: 1, Unfinished: 5, Errors: 1, Scheduled: 11, Dropped: 2,
		LateStarts: 1, MaxSendLagMs: 120, ServerJoined: true, WastedWorkerS: 1.5, PeakQueue: 4, TieWindowS: 0.1, TimeScale: 1}
	got := res
	got.Timeline, got.P95LatencyS, got.QueueEmptyAtS, got.QueueFullAtS = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if sum := res.OnTime + res.Rejected + res.TooLate + res.Unfinished + res.TimedOut; sum != res.Requests {
		t.Errorf("outcomes add up to %d of %d requests", sum, res.Requests)
	}
	// Latency from the scheduled time, nearest rank: 0.5 s and 1.5 s.
	if res.P95LatencyS == nil || *res.P95LatencyS != 1.5 {
		t.Errorf("p95 %v, want 1.5 s", res.P95LatencyS)
	}
	if res.QueueFullAtS == nil || *res.QueueFullAtS != 2 || res.QueueEmptyAtS == nil || *res.QueueEmptyAtS != 5 {
		t.Errorf("queue full at %v, empty at %v; want 2 and 5", res.QueueFullAtS, res.QueueEmptyAtS)
	}
	wantTL := []Second{
		{T: 0, Arrivals: 1, OnTime: 1, Queue: 0},
		{T: 1, Arrivals: 2, Dropped: 2, Rejected: 1, Queue: 2},
		{T: 2, Arrivals: 2, OnTime: 1, Queue: 4},
		{T: 3, Arrivals: 2, Queue: 4},
		{T: 4, Arrivals: 1, TooLate: 1, GaveUp: 2, Queue: 1},
		{T: 5, Arrivals: 1, GaveUp: 2, Queue: -1},
	}
	for i, s := range res.Timeline {
		if s != wantTL[i] {
			t.Errorf("second %d: %+v, want %+v", i, s, wantTL[i])
		}
	}
}

// Without a request log, a request the client gave up on is timed_out, never
// a guess at too_late or unfinished.
func TestJoinWithoutALogSaysTimedOut(t *testing.T) {
	t0 := time.Now()
	res := join(joinInput{start: t0, end: t0.Add(3 * time.Second), unit: time.Second, seconds: 3, queueCap: -1,
		requests: []request{{id: "a", scheduled: t0, reply: ReplyGaveUp, deadline: t0.Add(time.Second)}}})
	if res.ServerJoined || res.TimedOut != 1 || res.TooLate != 0 || res.Unfinished != 0 {
		t.Errorf("%+v", res)
	}
	if res.QueueEmptyAtS != nil || res.QueueFullAtS != nil || res.PeakQueue != 0 {
		t.Errorf("queue figures without samples: peak %d, full %v, empty %v", res.PeakQueue, res.QueueFullAtS, res.QueueEmptyAtS)
	}
}
