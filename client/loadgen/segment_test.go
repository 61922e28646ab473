package loadgen_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

func TestParseSegment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want loadgen.Segment
		err  string
	}{
		{"0/1", loadgen.Segment{Index: 0, Count: 1}, ""},
		{"1/2", loadgen.Segment{Index: 1, Count: 2}, ""},
		{"999/1000", loadgen.Segment{Index: 999, Count: 1000}, ""},
		{"3/2", loadgen.Segment{}, `"3/2": the index 3 must be in [0, 2)`},
		{"-1/2", loadgen.Segment{}, "the index -1 must be in [0, 2)"},
		{"0/0", loadgen.Segment{}, `"0/0": the count 0 must be in [1, 1000]`},
		{"0/1001", loadgen.Segment{}, "the count 1001 must be in [1, 1000]"},
		{"x", loadgen.Segment{}, `"x" is not i/n`},
		{"a/b", loadgen.Segment{}, "whole numbers"},
		{"$(JOB_COMPLETION_INDEX)/2", loadgen.Segment{}, "is not i/n with whole numbers"},
	} {
		got, err := loadgen.ParseSegment(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.in, err, c.err)
		}
	}
}

// The segments of a schedule have every arrival once: their shares add up
// to the schedule's length.
func TestSegmentArrivalsAddUp(t *testing.T) {
	sc := loadgen.OpeningSchedule()
	sc.BaseRate, sc.PeakRate = 3, 7 // 30 + 210 + 60 = 300, and odd rates
	total := int(loadgen.RampPacer{Schedule: sc}.Len())
	for _, n := range []int{1, 2, 3, 7, 299, 300, 301, 1000} {
		sum := 0
		for i := range n {
			sum += loadgen.SegmentArrivals(sc, loadgen.Segment{Index: i, Count: n})
		}
		if sum != total {
			t.Errorf("%d segments: %d arrivals, the schedule %d", n, sum, total)
		}
	}
	if got := loadgen.SegmentArrivals(sc, loadgen.Segment{}); got != total {
		t.Errorf("the whole schedule: %d, want %d", got, total)
	}
}

func TestConfigValidateSegment(t *testing.T) {
	base := loadgen.Config{Target: "http://127.0.0.1:9/enrich", Schedule: loadgen.OpeningSchedule(),
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1}
	for _, c := range []struct {
		seg   loadgen.Segment
		start bool
		want  string
	}{
		{loadgen.Segment{}, false, ""},
		{loadgen.Segment{Index: 0, Count: 1}, false, ""},
		{loadgen.Segment{Index: 1, Count: 2}, true, ""},
		{loadgen.Segment{Index: 1, Count: 2}, false, "start_at: segment 1/2 shares its schedule"},
		{loadgen.Segment{Index: 2, Count: 2}, true, "segment: the index 2"},
		{loadgen.Segment{Index: 1, Count: 0}, true, "segment: the count 0"},
		{loadgen.Segment{Index: 0, Count: 1001}, true, "segment: the count 1001"},
	} {
		cfg := base
		cfg.Segment = c.seg
		if c.start {
			cfg.StartAt = time.Now()
		}
		err := cfg.Validate()
		fe, isField := field.Of(err)
		if (c.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), c.want) || !isField || !strings.HasPrefix(c.want, fe.Field+": "))) {
			t.Errorf("%+v (start %v): %v, want %q", c.seg, c.start, err, c.want)
		}
	}
}

var segStart = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

// synthetic is a sound segment's result over the default schedule: every
// arrival of the segment sent and on time (time scale 0.1), nLat latencies
// of lat recorded in both histograms, the queue sampled as 100 × index + t.
func synthetic(t *testing.T, seg loadgen.Segment, lat time.Duration, nLat int) loadgen.Result {
	t.Helper()
	sc, e := loadgen.OpeningRun()
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
	m, err := loadgen.Merge([]loadgen.Result{s1, s0}) // in any order
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
	if m, err := loadgen.Merge([]loadgen.Result{s0, s1}); err != nil || m.ServerJoined || m.Unjoined != 1 {
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
			m, err := loadgen.Merge(in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v (%d requests), want an error with %q", err, m.Requests, c.want)
			}
		})
	}
}

// runSegments runs n segments of sc at once, from one start 300 ms ahead,
// against one in-process admission endpoint (as loadlab load starts it),
// in memory (in a synctest bubble), and merges them; it checks every
// request reached the endpoint once.
func runSegments(t *testing.T, sc loadgen.Schedule, e loadgen.Endpoint, n int) (loadgen.Result, []loadgen.Result) {
	t.Helper()
	const scale = 1
	m := startMemory(t, endpoint(e, scale, loadgen.DefaultTieWindowStep))
	start := time.Now().Add(300 * time.Millisecond)
	res, errs := make([]loadgen.Result, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res[i], errs[i] = loadgen.Load(context.Background(), inMemory(loadgen.Config{Target: m.url + "/enrich", Schedule: sc, Endpoint: e,
				Arrivals: loadgen.ArrivalsStep, TimeScale: scale, LateThreshold: modelLate,
				TieWindow: loadgen.DefaultTieWindowStep, Segment: loadgen.Segment{Index: i, Count: n}, StartAt: start}, m))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	merged, err := loadgen.Merge(res)
	if err != nil {
		t.Fatal(err)
	}
	log, err := m.admin.RequestLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range log.Entries {
		if ids[e.ID] {
			t.Errorf("request id %s sent twice", e.ID)
		}
		ids[e.ID] = true
	}
	if len(ids) != merged.Requests || log.Dropped != 0 {
		t.Errorf("the endpoint logged %d requests (%d dropped), the segments sent %d", len(ids), log.Dropped, merged.Requests)
	}
	return merged, res
}

// Two segments, 0/2 and 1/2, run at once against one endpoint and merged,
// count every outcome as one generator running the whole schedule against
// a fresh endpoint does, within the tolerance the comparison with the
// model allows real runs (compare's TestLoadAgreesWithTheModel: 2% of all
// requests per outcome); the open schedule's arrivals are scheduled
// exactly, each by one segment. On a fake clock over the in-memory
// network (net/http): no generator falls behind for want of CPU, so both
// send the schedule's load and are compared on it.
func TestSegmentsMatchOneGenerator(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*loadgen.Schedule)
	}{
		{"opening run", func(*loadgen.Schedule) {}},
		{"closed, 16 users", func(s *loadgen.Schedule) { s.Mode = loadgen.Closed; s.Users = 16 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sc, e := loadgen.OpeningRun()
				tt.change(&sc)
				// Open, the segments and the one generator run at once, each
				// against an endpoint of its own. Closed, one after the other:
				// how many requests closed users send depends on the replies'
				// timing.
				var wait func() loadgen.Result
				if sc.Mode == loadgen.Open {
					wait = startWhole(t, sc, e)
				}
				merged, segs := runSegments(t, sc, e, 2)
				if wait == nil {
					wait = startWhole(t, sc, e)
				}
				whole := wait()
				if behind := whole.Behind + segs[0].Behind + segs[1].Behind; behind != 0 {
					t.Fatalf("the generators fell behind their schedule by %d arrivals (segments %d, %d; one generator %d) on a fake clock",
						behind, segs[0].Behind, segs[1].Behind, whole.Behind)
				}
				if !merged.ServerJoined || merged.Dropped != 0 {
					t.Fatalf("merged: joined %v, dropped %d", merged.ServerJoined, merged.Dropped)
				}
				if sc.Mode == loadgen.Open {
					total := int(loadgen.RampPacer{Schedule: sc}.Len())
					if merged.Scheduled != total || whole.Scheduled != total {
						t.Errorf("scheduled: merged %d, one generator %d, the schedule %d", merged.Scheduled, whole.Scheduled, total)
					}
					for _, s := range segs {
						if want := loadgen.SegmentArrivals(sc, *s.Segment); s.Scheduled != want {
							t.Errorf("segment %s scheduled %d, its share %d", s.Segment, s.Scheduled, want)
						}
					}
				}
				if merged.Scheduled != whole.Scheduled {
					t.Errorf("scheduled: merged %d, one generator %d", merged.Scheduled, whole.Scheduled)
				}
				tol := 0.02 * float64(whole.Requests) // compare's TestLoadAgreesWithTheModel's tolerance
				wm, mm := whole.Outcomes(), merged.Outcomes()
				if math.Abs(float64(merged.Requests-whole.Requests)) > tol {
					t.Errorf("requests: merged %d, one generator %d", merged.Requests, whole.Requests)
				}
				for _, o := range loadgen.Outcomes {
					if math.Abs(float64(mm[o]-wm[o])) > tol {
						t.Errorf("%s: merged %d, one generator %d: more than 2%% of %d requests apart", o, mm[o], wm[o], whole.Requests)
					}
				}
				if d := math.Abs(merged.WastedWorkerS - whole.WastedWorkerS); d > max(0.02*whole.WastedWorkerS, 1) {
					t.Errorf("wasted worker-seconds: merged %.1f, one generator %.1f", merged.WastedWorkerS, whole.WastedWorkerS)
				}
				t.Logf("merged of %d+%d scheduled: requests %d, on time %d, rejected %d, too late %d, unfinished %d, wasted %.1f, p95 %v",
					segs[0].Scheduled, segs[1].Scheduled, merged.Requests, merged.OnTime, merged.Rejected, merged.TooLate, merged.Unfinished,
					merged.WastedWorkerS, fmtP(merged.P95LatencyS))
				t.Logf("one generator:      requests %d, on time %d, rejected %d, too late %d, unfinished %d, wasted %.1f, p95 %v",
					whole.Requests, whole.OnTime, whole.Rejected, whole.TooLate, whole.Unfinished, whole.WastedWorkerS, fmtP(whole.P95LatencyS))
			})
		})
	}
}

func fmtP(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// A segment whose start has passed when it is ready sends nothing.
func TestSegmentStartPassed(t *testing.T) {
	t.Parallel() // nothing is sent
	sc, e := loadgen.OpeningRun()
	m := startMock(t, endpoint(e, 0.1, 0))
	_, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1, Segment: loadgen.Segment{Index: 1, Count: 2},
		StartAt: time.Now().Add(-time.Second)})
	if !errors.Is(err, loadgen.ErrStartPassed) {
		t.Fatalf("got %v, want ErrStartPassed", err)
	}
	log, err := m.admin.RequestLog(context.Background())
	if err != nil || len(log.Entries) != 0 {
		t.Errorf("the endpoint logged %d requests (%v), want none", len(log.Entries), err)
	}
}

// A segment 0 that is ready only after the start resets nothing: the
// other segments' requests, already sent, stay in the shared log.
func TestLateSegmentZeroResetsNothing(t *testing.T) {
	t.Parallel() // nothing is sent
	sc, e := loadgen.OpeningRun()
	m := startMock(t, endpoint(e, 0.1, 0))
	resp, err := http.Post(m.url+"/enrich", "application/json", strings.NewReader(`{"record_id":"other","step":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, err = loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1, Segment: loadgen.Segment{Index: 0, Count: 2},
		StartAt: time.Now().Add(-time.Second)})
	if !errors.Is(err, loadgen.ErrStartPassed) || !strings.Contains(err.Error(), "nothing reset") {
		t.Fatalf("got %v, want ErrStartPassed", err)
	}
	st, err := m.admin.Scrape(context.Background())
	if err != nil || st.Stations["enrichment"].Requests[api.OutcomeServed] != 1 {
		t.Errorf("after a late segment 0: %+v (%v); want the other segment's request still counted", st.Stations["enrichment"].Requests, err)
	}
}

// loadlab load against one instance of several (/i/1/enrich) resets,
// samples and joins that instance, and leaves the other alone. On a fake
// clock over the in-memory wire: it counts requests, and a stall of the
// machine beside it would otherwise leave an arrival behind its schedule.
func TestLoadAgainstAnInstance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testLoadAgainstAnInstance)
}

func testLoadAgainstAnInstance(t *testing.T) {
	const scale = 0.2
	sc, e := loadgen.OpeningRun()
	sc.Duration, sc.BaseRate, sc.PeakRate = 4, 2, 2
	ms := mocktest.Start(t, mocktest.Options{Config: endpoint(e, scale, 0), Instances: 2, InMemory: true}).Instances
	res, err := loadgen.Load(context.Background(), inMemory(loadgen.Config{Target: ms[1].URL + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: scale}, &mock{url: ms[1].URL, dial: ms[1].Dial}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.ServerIdentified || res.QueueHighWater == nil || res.Requests != 8 || res.Behind != 0 || res.OnTime+res.Rejected+res.TooLate+res.Unfinished != res.Requests {
		t.Errorf("against /i/1: identified %v, queue high water %v, %d requests, %+v", res.ServerIdentified, res.QueueHighWater, res.Requests, res)
	}
	// The server counts a request when it ends: requests still in service
	// when the load's time ran out end within their service time.
	time.Sleep(time.Duration(float64(e.ServiceTime) * scale * float64(time.Second)))
	synctest.Wait()
	for k, want := range []int{0, 8} {
		st, err := ms[k].Client.Scrape(context.Background())
		total := 0.0
		for _, n := range st.Stations["enrichment"].Requests {
			total += n
		}
		if err != nil || total != float64(want) {
			t.Errorf("instance %d: %+v (%v), want %d requests", k, st.Stations["enrichment"].Requests, err, want)
		}
	}
}
