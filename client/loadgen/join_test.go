package loadgen

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// joinCase builds a join input by hand: one model second is one second,
// and the server's clock runs 5 s ahead of ours.
func joinCase() (joinInput, func(float64) time.Time) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	in := joinInput{start: t0, end: at(6), unit: time.Second, offset: 5 * time.Second, queueCap: 4,
		queue: []int{0, 2, 4, 4, 1, -1}, identified: true, tieWindow: 0.1, timeScale: 1}
	in.tally = tally{sent: 12, dropped: 2, late: 1, maxLag: 120 * time.Millisecond,
		replies:  map[Reply]int{ReplyOnTime: 2, ReplyRejected: 1, ReplyStatus: 2, ReplyTransport: 1, ReplyGaveUp: 5, ReplyPending: 1},
		statuses: map[int]int{404: 1, 500: 1}, timeline: make([]Second, 6),
		fromSchedule: NewLatencyHistogram(), fromSend: NewLatencyHistogram()}
	record(in.fromSchedule, 500*time.Millisecond)
	record(in.fromSchedule, 1500*time.Millisecond)
	record(in.fromSend, 400*time.Millisecond)
	record(in.fromSend, 1400*time.Millisecond)
	gaveUp := func(id string, sched float64) request {
		return request{id: id, scheduled: at(sched), reply: ReplyGaveUp, replied: at(sched + 2), deadline: at(sched + 2)}
	}
	in.joinable = []request{
		gaveUp("too-late", 2), gaveUp("still-running", 2), gaveUp("finished-after-end", 3),
		gaveUp("not-in-log", 3), gaveUp("cancelled", 4),
		{id: "pending", scheduled: at(5), reply: ReplyPending, replied: at(6), deadline: at(7)},
	}
	return in, at
}

func TestJoinGivesEveryRequestOneOutcome(t *testing.T) {
	in, at := joinCase()
	srv := func(s float64) *time.Time { v := at(s).Add(in.offset); return &v }
	in.log = &api.RequestLogSnapshot{Entries: []api.RequestEntry{
		{ID: "too-late", Arrived: *srv(2), Started: srv(3), Finished: srv(4.5), Outcome: api.OutcomeServedAfterClientLeft},
		{ID: "still-running", Arrived: *srv(2), Started: srv(5)},
		{ID: "finished-after-end", Arrived: *srv(3), Started: srv(5), Finished: srv(7), Outcome: api.OutcomeServedAfterClientLeft},
		{ID: "cancelled", Arrived: *srv(4), Finished: srv(5), Outcome: api.OutcomeCancelled},
		{ID: "pending", Arrived: *srv(5), Started: srv(5)},
	}}
	res := join(in)
	want := map[Outcome]int{OnTime: 2, Rejected: 1, TooLate: 1, Unfinished: 3, Cancelled: 1, TimedOut: 0,
		Unjoined: 1, ErrorStatus: 2, TransportError: 1}
	sum := 0
	for o, n := range res.Outcomes() {
		sum += n
		if n != want[o] {
			t.Errorf("%s: %d, want %d", o, n, want[o])
		}
	}
	if sum != res.Requests || res.Requests != 12 || res.Scheduled != 14 {
		t.Errorf("outcomes add up to %d of %d requests, %d scheduled", sum, res.Requests, res.Scheduled)
	}
	if res.ServerJoined || !res.ServerIdentified {
		t.Errorf("joined %v, identified %v: one request is missing from the log", res.ServerJoined, res.ServerIdentified)
	}
	if res.WastedWorkerS != 1.5 || res.StatusCodes[404] != 1 || res.StatusCodes[500] != 1 {
		t.Errorf("wasted %v worker-s, statuses %v", res.WastedWorkerS, res.StatusCodes)
	}
	if res.Timeline[4].TooLate != 1 {
		t.Errorf("too late in second 4 (server time 9.5 − 5): %+v", res.Timeline)
	}
	// Nearest rank over 0.5 s and 1.5 s, to HDR's 3 digits.
	if res.P95LatencyS == nil || *res.P95LatencyS < 1.5 || *res.P95LatencyS > 1.502 || res.LatencyFromSend.P50 < 0.4 || res.LatencyFromSend.P50 > 0.401 {
		t.Errorf("p95 from schedule %v, p50 from send %v", res.P95LatencyS, res.LatencyFromSend.P50)
	}
	if res.QueueFullAtS == nil || *res.QueueFullAtS != 2 || res.QueueEmptyAtS == nil || *res.QueueEmptyAtS != 5 || res.PeakQueue != 4 {
		t.Errorf("queue peak %d, full at %v, empty at %v; want 4, 2 and 5", res.PeakQueue, res.QueueFullAtS, res.QueueEmptyAtS)
	}
	// With every request in the log, the run is joined.
	in.log.Entries = append(in.log.Entries, api.RequestEntry{ID: "not-in-log", Arrived: *srv(3), Started: srv(4), Finished: srv(5.5), Outcome: api.OutcomeServedAfterClientLeft})
	if res := join(in); !res.ServerJoined || res.Unjoined != 0 || res.TooLate != 2 {
		t.Errorf("with the whole log: joined %v, unjoined %d, too late %d", res.ServerJoined, res.Unjoined, res.TooLate)
	}
}

// Requests past the join's own bound are unjoined, and counted; against a
// target without a log they are timed_out (gave up) or unfinished
// (pending), as the others.
func TestJoinCountsOverflow(t *testing.T) {
	in, _ := joinCase()
	in.overflow = map[Reply]int{ReplyGaveUp: 7, ReplyPending: 2}
	in.log = &api.RequestLogSnapshot{}
	if res := join(in); res.Unjoined != 9+len(in.joinable) || res.ServerJoined {
		t.Errorf("with a log: unjoined %d, joined %v", res.Unjoined, res.ServerJoined)
	}
	in.log, in.identified = nil, false
	if res := join(in); res.Unjoined != 0 || res.TimedOut != 7+5 || res.Unfinished != 2+1 {
		t.Errorf("without a log: unjoined %d, timed out %d, unfinished %d", res.Unjoined, res.TimedOut, res.Unfinished)
	}
}

// A request log that could not be read leaves the requests that needed it
// unjoined, and says why.
func TestJoinWithAnUnreadableLog(t *testing.T) {
	in, _ := joinCase()
	in.logError = "mock /admin/requests: 500"
	if res := join(in); res.Unjoined != len(in.joinable) || res.ServerJoined || res.LogError == "" {
		t.Errorf("unjoined %d, joined %v, log error %q", res.Unjoined, res.ServerJoined, res.LogError)
	}
}

// An interrupted run's timeline ends where the run did.
func TestJoinTrimsAnInterruptedTimeline(t *testing.T) {
	in, _ := joinCase()
	in.partial, in.seconds = true, 3
	if res := join(in); !res.Partial || len(res.Timeline) != 3 {
		t.Errorf("partial %v, %d seconds", res.Partial, len(res.Timeline))
	}
}

// Without a request log (a foreign target), a request the client gave up on
// is timed_out, never a guess at too_late or unfinished.
func TestJoinWithoutALogSaysTimedOut(t *testing.T) {
	in, _ := joinCase()
	in.identified, in.queue, in.queueCap = false, nil, -1
	res := join(in)
	if res.ServerJoined || res.ServerIdentified || res.TimedOut != 5 || res.TooLate != 0 || res.Unfinished != 1 || res.Unjoined != 0 {
		t.Errorf("%+v", res)
	}
	if res.QueueEmptyAtS != nil || res.QueueFullAtS != nil || res.PeakQueue != 0 {
		t.Errorf("queue figures without samples: peak %d, full %v, empty %v", res.PeakQueue, res.QueueFullAtS, res.QueueEmptyAtS)
	}
}

// Arrivals the generator fell behind on are scheduled, not sent.
func TestJoinCountsBehindInTheSchedule(t *testing.T) {
	in, _ := joinCase()
	in.behind = 3
	if res := join(in); res.Scheduled != 12+2+3 || res.Behind != 3 || res.Requests != 12 {
		t.Errorf("scheduled %d, behind %d, requests %d", res.Scheduled, res.Behind, res.Requests)
	}
}
