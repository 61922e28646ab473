package loadresult_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
)

// openingRun is the admission document's opening run: an open ramp of 2
// requests/s, 8/s from 10 s to 40 s, a 10 s client timeout, over 60 s,
// against 8 workers of 2 s and a queue of 20.
func openingRun() (loadgen.Schedule, loadgen.Endpoint) {
	return loadgen.Schedule{Timeout: 10, Mode: loadgen.Open, BaseRate: 2, PeakRate: 8, RampStart: 10, RampEnd: 40, Users: 16, Think: 1, Duration: 60},
		loadgen.Endpoint{Workers: 8, ServiceTime: 2, Queue: 20}
}

var segStart = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

// synthetic is a sound segment's result over the default schedule: every
// arrival of the segment sent and on time (time scale 0.1), nLat latencies
// of lat recorded in both histograms, the queue sampled as 100 × index + t.
func synthetic(t *testing.T, seg loadgen.Segment, lat time.Duration, nLat int) loadgen.Result {
	t.Helper()
	sc, e := openingRun()
	r := loadgen.Result{Segment: &seg, Scenario: loadgen.Scenario{Endpoint: e, Schedule: sc}, Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1, TieWindowS: 0.1,
		Target: "http://127.0.0.1:9/enrich", StartAt: segStart, Client: string(loadgen.ClientFastHTTP), MaxInFlight: 44,
		ServerIdentified: true, ServerJoined: true, StatusCodes: map[int]int{}, Timeline: make([]loadgen.Second, sc.Duration)}
	for s := range r.Timeline {
		r.Timeline[s].T, r.Timeline[s].Queue = s, 100*seg.Index+s
	}
	p := loadgen.RampPacer{Schedule: sc, Mode: loadgen.ArrivalsStep, Unit: time.Second}
	for hit := seg.Index; ; hit += seg.Count {
		off, ok := p.Due(hit)
		if !ok {
			break
		}
		s := &r.Timeline[int(off/time.Second)]
		s.Arrivals++
		s.OnTime++
		r.Scheduled++
		r.Requests++
		r.OnTime++
	}
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for range nLat {
		if err := h.RecordValue(lat.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	model := float64(lat) / float64(100*time.Millisecond)
	l := loadgen.Latency{Count: int64(nLat), P50: model, P90: model, P95: model, P99: model, P999: model, Max: model}
	r.LatencyFromSchedule, r.LatencyFromSend = l, l
	r.LatencyFromScheduleHDR, r.LatencyFromSendHDR = string(enc), string(enc)
	p95 := model
	r.P95LatencyS = &p95
	return r
}

// pair is two sound segments of one schedule, with different outcomes:
// segment 0 had 4 served too late and 2 dropped, segment 1 3 rejected and
// 2 error statuses.
func pair(t *testing.T) (s0, s1 loadgen.Result) {
	s0 = synthetic(t, loadgen.Segment{Index: 0, Count: 2}, 100*time.Millisecond, 10)
	s1 = synthetic(t, loadgen.Segment{Index: 1, Count: 2}, time.Second, 10)
	s0.OnTime, s0.TooLate, s0.WastedWorkerS = s0.OnTime-4, 4, 8.5
	s0.OnTime, s0.Requests, s0.Dropped = s0.OnTime-2, s0.Requests-2, 2
	s0.Timeline[10].Arrivals, s0.Timeline[10].Dropped = s0.Timeline[10].Arrivals-2, 2
	s0.LateStarts, s0.MaxSendLagMs, s0.PeakQueue = 1, 3, 20
	full, empty, hw0, hw1 := 15, 50, 20, 22
	s0.QueueFullAtS, s0.QueueEmptyAtS, s0.QueueHighWater = &full, &empty, &hw0
	s1.OnTime, s1.Rejected, s1.ErrorStatus, s1.StatusCodes = s1.OnTime-5, 3, 2, map[int]int{500: 2}
	s1.LateStarts, s1.MaxSendLagMs, s1.WastedWorkerS, s1.PeakQueue = 2, 7, 1.5, 130
	s1.QueueHighWater = &hw1
	return s0, s1
}

// Merge sums the segments' counts and timelines, takes the shared
// station's figures from segment 0, and recomputes the percentiles from
// the merged histograms: ten latencies of 1 model second and ten of 10
// have a p50 of 1 and a p95 of 10 (averaging the segments' would say 5.5).
func TestMerge(t *testing.T) {
	s0, s1 := pair(t)
	m, err := loadresult.Merge([]loadgen.Result{s1, s0}) // in any order
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"scheduled", m.Scheduled, 300}, {"requests", m.Requests, 298}, {"dropped", m.Dropped, 2},
		{"on_time", m.OnTime, 150 - 6 + 150 - 5}, {"too_late", m.TooLate, 4}, {"rejected", m.Rejected, 3},
		{"error_status", m.ErrorStatus, 2}, {"status 500", m.StatusCodes[500], 2}, {"late_starts", m.LateStarts, 3},
		{"max_in_flight", m.MaxInFlight, 88}, {"peak_queue (segment 0's)", m.PeakQueue, 20},
		{"queue_high_water (the largest)", *m.QueueHighWater, 22}, {"queue_full_at_s", *m.QueueFullAtS, 15},
		{"queue_empty_at_s", *m.QueueEmptyAtS, 50}, {"merged_segments", m.MergedSegments, 2},
		{"timeline[10].arrivals", m.Timeline[10].Arrivals, 6}, {"timeline[10].dropped", m.Timeline[10].Dropped, 2},
		{"timeline[59].queue (segment 0's)", m.Timeline[59].Queue, 59}, {"timeline[59].t", m.Timeline[59].T, 59},
		{"latency count", int(m.LatencyFromSchedule.Count), 20},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if m.WastedWorkerS != 10 || m.MaxSendLagMs != 7 || m.Segment != nil || m.Partial || !m.ServerJoined || m.Client != string(loadgen.ClientFastHTTP) {
		t.Errorf("wasted %v, max lag %v, segment %v, partial %v, joined %v, client %q", m.WastedWorkerS, m.MaxSendLagMs,
			m.Segment, m.Partial, m.ServerJoined, m.Client)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.001*want } // HDR's 3 digits
	for _, l := range []loadgen.Latency{m.LatencyFromSchedule, m.LatencyFromSend} {
		if !near(l.P50, 1) || !near(l.P90, 10) || !near(l.P95, 10) || !near(l.Max, 10) {
			t.Errorf("merged latency %+v: want p50 1, p90, p95 and max 10", l)
		}
	}
	if m.P95LatencyS == nil || !near(*m.P95LatencyS, 10) {
		t.Errorf("p95_latency_s %v, want 10", m.P95LatencyS)
	}
	if m.LatencyFromScheduleHDR == "" || m.Scenario != s0.Scenario || !m.StartAt.Equal(segStart) || m.Target != s0.Target {
		t.Errorf("the merge does not say its run: hdr %d bytes, %+v, %v, %s", len(m.LatencyFromScheduleHDR), m.Scenario, m.StartAt, m.Target)
	}
	if sum := m.OnTime + m.Rejected + m.TooLate + m.Unfinished + m.Cancelled + m.TimedOut + m.Unjoined + m.ErrorStatus + m.TransportErrors; sum != m.Requests || m.Requests+m.Dropped+m.Behind != m.Scheduled {
		t.Errorf("outcomes %d, requests %d + dropped %d + behind %d, scheduled %d", sum, m.Requests, m.Dropped, m.Behind, m.Scheduled)
	}
	// The inputs are untouched.
	if s0.Timeline[10].Arrivals != 2 || s0.StatusCodes[500] != 0 {
		t.Errorf("Merge changed its input: %+v %v", s0.Timeline[10], s0.StatusCodes)
	}

	s1.ServerJoined, s1.Unjoined, s1.OnTime = false, 1, s1.OnTime-1
	if m, err := loadresult.Merge([]loadgen.Result{s0, s1}); err != nil || m.ServerJoined || m.Unjoined != 1 {
		t.Errorf("one segment unjoined: %v, joined %v, unjoined %d", err, m.ServerJoined, m.Unjoined)
	}
}

// Merge refuses, naming them, what is not the segments of one whole run.
func TestMergeRefuses(t *testing.T) {
	other := loadgen.Segment{Index: 1, Count: 3}
	for _, c := range []struct {
		name   string
		change func(s0, s1 *loadgen.Result) []loadgen.Result
		want   string
	}{
		{"a whole run", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Segment = nil; return nil }, "result 2 of 2 is not a segment"},
		{"another split", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Segment = &other; return nil }, "segment 0/2 and segment 1/3 are of different splits"},
		{"a segment missing", func(s0, s1 *loadgen.Result) []loadgen.Result { return []loadgen.Result{*s0} }, "segment 1/2 missing"},
		{"a segment twice", func(s0, s1 *loadgen.Result) []loadgen.Result { return []loadgen.Result{*s0, *s1, *s0} }, "segment 0/2 is given twice (results 1 and 3)"},
		{"no segments", func(s0, s1 *loadgen.Result) []loadgen.Result { return []loadgen.Result{} }, "no segments"},
		{"partial", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Partial = true; return nil }, "segment 1/2 is partial"},
		{"another scenario", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Scenario.PeakRate = 9; return nil }, "segment 1/2 is not of segment 0/2's run: scenario"},
		{"another endpoint", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Scenario.Workers = 9; return nil }, "segment 1/2 is not of segment 0/2's run: scenario"},
		{"another target", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Target = "http://10.0.0.1/enrich"; return nil }, "target http://10.0.0.1/enrich against"},
		{"another start", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.StartAt = s1.StartAt.Add(time.Second); return nil }, "start 2026-12-01T10:00:01.123456789Z against"},
		{"another time scale", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.TimeScale = 0.2; return nil }, "time scale 0.2 against 0.1"},
		{"other arrivals", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Arrivals = loadgen.ArrivalsUniform; return nil }, "arrivals uniform against step"},
		{"another tie window", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.TieWindowS = 0; return nil }, "tie window 0 against 0.1"},
		{"no schedule", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Scenario = loadgen.Scenario{}; return nil }, "segment 1/2 does not say its schedule"},
		{"outcomes do not add up", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.OnTime--; return nil }, "segment 1/2 does not add up"},
		{"arrivals lost", func(s0, s1 *loadgen.Result) []loadgen.Result {
			s1.OnTime, s1.Requests, s1.Scheduled, s1.Timeline[0].Arrivals = s1.OnTime-1, s1.Requests-1, s1.Scheduled-1, 0
			return nil
		}, "segment 1/2 scheduled 149 arrivals, not its 150"},
		{"timeline short", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.Timeline = s1.Timeline[:30]; return nil }, "segment 1/2 has 30 timeline seconds"},
		{"no histogram", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.LatencyFromScheduleHDR = ""; return nil }, "segment 1/2: latency_from_schedule: no histogram"},
		{"a histogram of others", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.LatencyFromSend.Count = 11; return nil }, "holds 10 latencies, the summary counts 11"},
		{"a histogram garbled", func(s0, s1 *loadgen.Result) []loadgen.Result { s1.LatencyFromSendHDR = "AAAA"; return nil }, "does not decode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s0, s1 := pair(t)
			in := c.change(&s0, &s1)
			if in == nil {
				in = []loadgen.Result{s0, s1}
			}
			m, err := loadresult.Merge(in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v (%d requests), want an error with %q", err, m.Requests, c.want)
			}
		})
	}
}
