package records_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// checkTimed checks what holds for every time-bounded run: the states add
// up to the records begun, every begun record ended in some second (and
// phase), and the seconds are numbered from 0 without a gap.
func checkTimed(t *testing.T, r records.Result) {
	t.Helper()
	checkAddsUp(t, r)
	if r.NotStarted != 0 {
		t.Errorf("not_started %d in a time-bounded run", r.NotStarted)
	}
	ended, accepted, rejections := 0, 0, 0
	for i, s := range r.PerSecond {
		if s.T != i {
			t.Errorf("per_second[%d].t = %d", i, s.T)
		}
		ended, accepted, rejections = ended+s.Ended, accepted+s.Accepted, rejections+s.WriteRejections
	}
	if ended != r.Records || accepted != r.Complete+r.Incomplete || rejections != r.WriteRejections {
		t.Errorf("seconds count %d ended, %d accepted, %d write rejections; the run %d records, %d accepted, %d rejections",
			ended, accepted, rejections, r.Records, r.Complete+r.Incomplete, r.WriteRejections)
	}
	if len(r.Phases) == 0 {
		return
	}
	begun, ended, accepted, rejections := 0, 0, 0, 0
	for _, p := range r.Phases {
		states := 0
		for _, n := range p.States {
			states += n
		}
		if states != p.Ended || p.Accepted != p.States[records.Complete]+p.States[records.Incomplete] {
			t.Errorf("phase %s: states %v, ended %d, accepted %d", p.Name, p.States, p.Ended, p.Accepted)
		}
		begun, ended, accepted, rejections = begun+p.Begun, ended+p.Ended, accepted+p.Accepted, rejections+p.WriteRejections
	}
	if begun != r.Records || ended != r.Records-r.NotStarted || accepted != r.Complete+r.Incomplete || rejections != r.WriteRejections {
		t.Errorf("phases count %d begun, %d ended, %d accepted, %d write rejections; the run %d records, %d accepted, %d rejections",
			begun, ended, accepted, rejections, r.Records, r.Complete+r.Incomplete, r.WriteRejections)
	}
}

// A run of 5 s, 8 records in flight, issues records throughout, stops
// issuing at the deadline, ends within the duration plus the drain, and
// the server stored exactly the writes the client saw created.
func TestTimeBoundedRun(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testTimeBoundedRun)
}

func testTimeBoundedRun(t *testing.T) {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Enrichment = latency.Spec{Kind: "fixed", Value: 50 * time.Millisecond} // records of 180 lab ms
	cfg.Profiles[config.ProfileHealthy] = p
	m := startMock(t, cfg)
	res := run(t, m, "bounded:8", records.MaxRecords, func(c *records.Config) { c.Duration = 5 * time.Second })
	checkTimed(t, res)
	// A record lasts at most 4 calls of a permit wait and a call timeout.
	longest := 4 * (records.DefaultPermitTimeout + records.DefaultCallTimeout).Seconds()
	if lab := res.DurationSeconds; lab < 5 || lab > 5+longest || res.DurationLimit != 5 || res.Partial {
		t.Errorf("lasted %.2f lab s, limit %v, partial %v; want 5 lab s plus the drain", lab, res.DurationLimit, res.Partial)
	}
	if res.Records <= 8 || res.Records == records.MaxRecords { // more than the first 8: records came as slots freed
		t.Errorf("%d records begun in 5 lab s", res.Records)
	}
	if len(res.PerSecond) < 5 || len(res.PerSecond) > 6 {
		t.Fatalf("%d seconds: %+v", len(res.PerSecond), res.PerSecond)
	}
	for _, s := range res.PerSecond[:5] {
		if s.Accepted == 0 {
			t.Errorf("second %d: nothing accepted: %+v", s.T, res.PerSecond)
		}
	}
	st := res.Server
	var writesSeen float64
	for _, v := range st.Stations[api.Records].Requests {
		writesSeen += v
	}
	if res.WritesCreated != st.StoredWrites || res.WritesCreated != res.Complete+res.Incomplete ||
		float64(res.CallsSent[records.Records]) != writesSeen {
		t.Errorf("client: %d × 201, %d writes sent, %d accepted; server: %d stored, %v writes seen",
			res.WritesCreated, res.CallsSent[records.Records], res.Complete+res.Incomplete, st.StoredWrites, writesSeen)
	}
	if res.Phases != nil || res.StartedAt.IsZero() {
		t.Errorf("phases %v, started at %v: want no phases, a start", res.Phases, res.StartedAt)
	}
}

// The records cap still ends a time-bounded run, first if it comes first.
func TestTimeBoundedRunEndsAtItsCap(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testEndsAtItsCap)
}

func testEndsAtItsCap(t *testing.T) {
	m := startMock(t, config.Default())
	res := run(t, m, "C4", 20, func(c *records.Config) {
		c.Phases = []records.Phase{{Name: "a", Duration: time.Minute}, {Name: "b", Duration: time.Minute}}
	})
	checkTimed(t, res)
	if res.Records != 20 || res.Complete != 20 || res.DurationLimit != 120 || res.DurationSeconds > 60 || !res.RecordsCapReached {
		t.Fatalf("records %d, complete %d, limit %v, %.2f s", res.Records, res.Complete, res.DurationLimit, res.DurationSeconds)
	}
	a, b := res.Phases[0], res.Phases[1]
	if len(res.Phases) != 2 || a.Begun != 20 || a.Ended != 20 || a.End > res.DurationSeconds || a.End <= 0 ||
		b.Start != 60 || b.End != 60 || b.Ended != 0 || len(res.PerSecond) > 7 {
		t.Errorf("phases %+v; want a cut at the run's end, b never reached", res.Phases)
	}
}

// A phased run in which the test squeezes the system of record to 1 worker
// and 1 queue slot for the middle phase (PATCH /admin/config at the phase
// boundaries, timed by the run's StartAt): C2's 32 records in flight, with
// no write budget, are refused more in that phase, and fewer are accepted.
func TestPhasedRunSeesTheSqueeze(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testSqueeze)
}

func testSqueeze(t *testing.T) {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Records = latency.Spec{Kind: "fixed", Value: 60 * time.Millisecond} // 6 workers: 100 writes per lab s
	cfg.Profiles[config.ProfileHealthy] = p
	m := startMock(t, cfg)
	patch := func(body string) {
		req, _ := http.NewRequest(http.MethodPatch, m.url+api.PathAdminConfig, strings.NewReader(body))
		resp, err := m.http.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("PATCH %s: %s", body, resp.Status)
		}
	}
	phase := 3 * time.Second
	startAt := time.Now().Add(300 * time.Millisecond)
	done := make(chan struct{})
	go func() { // the experiment runner's part: change the settings at the boundaries
		defer close(done)
		time.Sleep(time.Until(startAt.Add(phase)))
		patch(`{"records": {"workers": 1, "queue": 1}}`)
		time.Sleep(time.Until(startAt.Add(2 * phase)))
		patch(`{"records": {"workers": 6, "queue": 6}}`)
	}()
	res := run(t, m, "C2", records.MaxRecords, func(c *records.Config) {
		c.Phases = []records.Phase{{Name: "before", Duration: phase}, {Name: "squeeze", Duration: phase}, {Name: "after", Duration: phase}}
		c.StartAt = startAt
	})
	<-done
	checkTimed(t, res)
	if len(res.Phases) < 3 || res.DurationLimit != 9 {
		t.Fatalf("phases %+v, limit %v", res.Phases, res.DurationLimit)
	}
	before, squeeze, after := res.Phases[0], res.Phases[1], res.Phases[2]
	t.Logf("accepted per lab s %.1f / %.1f / %.1f, write rejections %d / %d / %d, peak writes %d / %d / %d, p95 %.0f / %.0f / %.0f lab ms",
		before.AcceptedPerLabSecond, squeeze.AcceptedPerLabSecond, after.AcceptedPerLabSecond,
		before.WriteRejections, squeeze.WriteRejections, after.WriteRejections,
		before.PeakConcurrentWrites, squeeze.PeakConcurrentWrites, after.PeakConcurrentWrites,
		before.LatencyMs.P95, squeeze.LatencyMs.P95, after.LatencyMs.P95)
	if squeeze.WriteRejections <= before.WriteRejections || squeeze.WriteRejections <= after.WriteRejections {
		t.Errorf("write rejections %d, %d, %d: want the most in the squeeze", before.WriteRejections, squeeze.WriteRejections, after.WriteRejections)
	}
	if squeeze.Accepted >= before.Accepted || squeeze.Accepted >= after.Accepted {
		t.Errorf("accepted %d, %d, %d: want the fewest in the squeeze", before.Accepted, squeeze.Accepted, after.Accepted)
	}
	for i, p := range res.Phases[:3] {
		if p.Name != []string{"before", "squeeze", "after"}[i] || p.Start != 3*float64(i) || p.End != 3*float64(i+1) ||
			p.Begun == 0 || p.PeakConcurrentWrites < 1 || p.PeakConcurrentWrites > res.PeakInFlight[records.Records] ||
			p.LatencyMs.P50 <= 0 || p.LatencyMs.P50 > p.LatencyMs.P95 || p.LatencyMs.P95 > p.LatencyMs.P99 || p.LatencyMs.P99 > p.LatencyMs.Max {
			t.Errorf("phase %d: %+v (client peak writes %d)", i, p, res.PeakInFlight[records.Records])
		}
	}
	// Records in progress at 9 lab s (32 are, with C2) end in the drain;
	// none begins there.
	if len(res.Phases) != 4 {
		t.Fatalf("%d phases, want 3 and the drain: %+v", len(res.Phases), res.Phases)
	}
	if d := res.Phases[3]; d.Name != records.DrainPhase || d.Start != 9 || d.End < 9 || d.Begun != 0 || d.Ended == 0 {
		t.Errorf("drain %+v", d)
	}
}

// A run told to start 300 ms from now starts then, not before; one told to
// start in the past starts at once and says how late. On a fake clock,
// exactly.
func TestStartAt(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testStartAt)
}

func testStartAt(t *testing.T) {
	m := startMock(t, config.Default())
	at := time.Now().Add(300 * time.Millisecond)
	res := run(t, m, "C4", 5, func(c *records.Config) { c.StartAt = at })
	if !res.StartedAt.Equal(at) || res.StartLateSeconds != 0 || res.Complete != 5 {
		t.Errorf("told %v, started %v (%.3f s late), %d complete", at, res.StartedAt, res.StartLateSeconds, res.Complete)
	}
	called := time.Now()
	past := called.Add(-2 * time.Second)
	res = run(t, m, "C4", 5, func(c *records.Config) { c.StartAt = past })
	if late := res.StartLateSeconds; late != 2 || !res.StartedAt.Equal(called) {
		t.Errorf("told %v, started %v: %.3f s late", past, res.StartedAt, late)
	}
}

// A time-bounded run interrupted before its end is partial; its records
// are those begun, all ended.
func TestTimeBoundedRunInterrupted(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testInterrupted)
}

func testInterrupted(t *testing.T) {
	m := startMock(t, config.Default())
	ccfg := m.config()
	ccfg.Records = records.MaxRecords
	ccfg.Phases = []records.Phase{{Name: "one", Duration: 10 * time.Second}, {Name: "two", Duration: 10 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	res, err := records.Run(ctx, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	checkTimed(t, res)
	if !res.Partial || res.Records == 0 || res.DurationSeconds != 4 || len(res.Phases) != 2 || res.Phases[1].End != 10 {
		t.Errorf("partial %v, %d records, %.2f s, phases %+v", res.Partial, res.Records, res.DurationSeconds, res.Phases)
	}
}

func TestTimeValidation(t *testing.T) {
	ph := func(ps ...any) []records.Phase {
		var out []records.Phase
		for i := 0; i < len(ps); i += 2 {
			out = append(out, records.Phase{Name: ps[i].(string), Duration: ps[i+1].(time.Duration)})
		}
		return out
	}
	for _, tt := range []struct {
		change func(*records.Config)
		want   string
	}{
		{func(c *records.Config) { c.Duration = -time.Second }, "duration: -1s must be ≥ 0"},
		{func(c *records.Config) { c.Phases = ph("a", time.Second, "", time.Second) }, "phases: phase 2 has no name"},
		{func(c *records.Config) { c.Phases = ph("a", time.Second, "a", time.Second) }, `phases: "a" appears twice`},
		{func(c *records.Config) { c.Phases = ph("a", time.Second, "b", time.Duration(0)) }, "phases: b: duration 0s must be > 0"},
		{func(c *records.Config) { c.Phases = ph("drain", time.Second) }, `phases: "drain"`},
		{func(c *records.Config) { c.Duration, c.Phases = 3*time.Second, ph("a", time.Second, "b", time.Second) }, "phases: they add up to 2s, not the duration 3s"},
		{func(c *records.Config) { c.CallURLs = map[string]string{"nope": "http://127.0.0.1:1"} }, `call_urls: "nope" is not a dependency`},
		{func(c *records.Config) { c.CallURLs = map[string]string{records.Records: "127.0.0.1:1"} }, "call_urls: records:"},
	} {
		cfg := records.DefaultConfig()
		tt.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
	cfg := records.DefaultConfig()
	cfg.Duration, cfg.Phases = 2*time.Second, ph("a", time.Second, "b", time.Second)
	if err := cfg.Validate(); err != nil {
		t.Errorf("phases adding up to the duration: %v", err)
	}
}
