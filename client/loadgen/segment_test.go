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

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
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
	merged, err := loadresult.Merge(res)
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
