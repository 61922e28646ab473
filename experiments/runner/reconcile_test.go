package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// A mock service still busy with earlier work when a run's reset comes
// makes the run contaminated, with the figures; the matrix goes on, the
// wait is bounded, and runs after the work ends are valid. The earlier
// work is a write that never ends by itself: its client leaves when the
// first run is done, and the service drops it (cancel on disconnect), so
// which runs see it busy does not depend on how fast the machine starts
// the runner's children.
func TestBusyMockServiceContaminatesTheRun(t *testing.T) {
	t.Parallel() // mostly waiting for the quiet limit; it checks statuses, not speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", strings.Replace(exptest.TinySpec, "[C2, C4]", "[C4]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	// The mock service has a profile whose writes take an hour: the stray
	// write outlives the runner's quiet limit, which the runner computes
	// from the configuration it is told of, the default one (3 × the 8 s
	// hang × 0.05 = 1.2 s).
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	cfg.Records.CancelOnDisconnect = true
	cfg.Profiles["stuck"] = config.Profile{Enrichment: cfg.Profiles[config.ProfileHealthy].Enrichment,
		Records: latency.Spec{Kind: "fixed", Value: time.Hour}}
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	told := config.Default()
	told.Seed, told.TimeScale = spec.Seed, spec.TimeScale
	ctx := context.Background()
	if err := m.Client.SetProfile(ctx, "stuck"); err != nil {
		t.Fatal(err)
	}
	strayCtx, leave := context.WithCancel(ctx)
	defer leave()
	stray := make(chan struct{})
	go func() {
		defer close(stray)
		req, _ := http.NewRequestWithContext(strayCtx, http.MethodPost, m.URL+api.PathRecords, strings.NewReader(`{"id":"stray","complete":true}`))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for m.Service.Stats().Stations[api.Records].Busy == 0 {
		time.Sleep(time.Millisecond)
	}
	r := mustNew(t, Config{Spec: spec, Binary: bin, Target: m.URL, MockConfig: told}, leaveAfterFirst{leave})
	start := time.Now()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-stray
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the matrix took %v", el)
	}
	first := res.Runs[0]
	if first.Status != resultsfile.RunContaminated || !strings.Contains(first.Reason, "records 1 busy") || first.QuietBefore.Quiet ||
		first.QuietBefore.Waited < 1.2 || first.QuietBefore.Waited > 3 {
		t.Errorf("run 1: %s %q, quiet before %+v; want contaminated after the 1.2 s limit, naming the busy worker", first.Status, first.Reason, first.QuietBefore)
	}
	if last := res.Runs[len(res.Runs)-1]; last.Status != resultsfile.RunValid {
		t.Errorf("run %d, after the stray write ended: %s %q", last.Run, last.Status, last.Reason)
	}
	if cs := res.Cells[0]; cs.Valid == cs.Runs || len(cs.Excluded) == 0 || !strings.Contains(cs.Excluded[0], "run 1: contaminated") {
		t.Errorf("cell: %d valid of %d, excluded %q", cs.Valid, cs.Runs, cs.Excluded)
	}
}

// leaveAfterFirst ends the stray write's client once the first run is done.
type leaveAfterFirst struct{ leave context.CancelFunc }

func (leaveAfterFirst) BiasMeasured(resultsfile.CellBias, float64)     {}
func (leaveAfterFirst) Advising(string, string)                        {}
func (leaveAfterFirst) RunStarting(plan.Unit, int, int, time.Duration) {}
func (l leaveAfterFirst) RunDone(_ resultsfile.RunRecord, done, _ int, _ time.Duration) {
	if done == 1 {
		l.leave()
	}
}

// A proxy between client and mock service answers one write per run 201
// without forwarding it (for C2), and forwards another and then cuts the
// connection before the answer (for C4). The C2 runs do not reconcile and
// are invalid, naming the figures; the C4 runs' unknown write is found
// stored by GET /records/{id}, and, the client having exited 1, they are
// failed. Every verdict is inconclusive for want of valid runs.
func TestRunsThatDoNotReconcileAreExcluded(t *testing.T) {
	t.Parallel() // it checks statuses and counts, not speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", "rules: paired-v2\n"+exptest.TinyHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	mockURL, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	target, _ := url.Parse(mockURL)
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != api.PathRecords {
			forward.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"C2-`) && strings.Contains(string(body), `-00003"`):
			w.WriteHeader(http.StatusCreated) // never reaches the system of record
			io.WriteString(w, `{"stored":true}`)
			return
		case strings.Contains(string(body), `"C4-`) && strings.Contains(string(body), `-00005"`):
			resp, err := http.Post(mockURL+api.PathRecords, "application/json", strings.NewReader(string(body)))
			if err == nil {
				resp.Body.Close()
			}
			conn, _, err := w.(http.Hijacker).Hijack() // stored, and no answer
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		forward.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: mockURL, ClientTarget: proxy.URL, MockConfig: *mockCfg}, nil)
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range res.Runs {
		rc := run.Reconciliation
		if rc == nil {
			t.Fatalf("%s run %d: %s %q, no reconciliation", run.Cell, run.Run, run.Status, run.Reason)
		}
		switch run.Cell.Strategy {
		case "C2":
			stored := fmt.Sprintf("writes stored: client %d (%[1]d answered 201 + 0 answered 200 + 0 of unknown outcome found stored), server %d", rc.Client.WritesCreated, rc.Client.WritesCreated-1)
			if run.Status != resultsfile.RunInvalid || !strings.Contains(run.Reason, stored) || rc.Server.StoredWrites != rc.Client.WritesCreated-1 ||
				!strings.Contains(run.Reason, "records calls: client sent 30, server counted 29") {
				t.Errorf("C2 run %d: %s %q; want invalid, naming the stored writes and the calls", run.Run, run.Status, run.Reason)
			}
		case "C4":
			if run.Status != resultsfile.RunFailed || !strings.Contains(run.Reason, "client exited 1") ||
				rc.WriteUnknownStored != 1 || rc.WriteUnknownAbsent != 0 || len(rc.Differences) != 0 {
				t.Errorf("C4 run %d: %s %q, reconciliation %+v; want failed (exit 1) with the unknown write found stored", run.Run, run.Status, run.Reason, rc)
			}
		}
	}
	for _, v := range res.Verdicts {
		if v.Verdict != resultsfile.Inconclusive || !strings.Contains(v.Note, "insufficient runs (0 of 3) in C4/slow-write/cpus-1") {
			t.Errorf("%s: %s %q; want inconclusive for insufficient runs", v.ID, v.Verdict, v.Note)
		}
	}
	var md strings.Builder
	report.WriteMarkdown(&md, res)
	if !strings.Contains(md.String(), "## Excluded runs") || !strings.Contains(md.String(), "C2/slow-write/cpus-1 run 1 (seed 2): invalid: client and server do not reconcile") {
		t.Errorf("the report does not list the excluded runs:\n%s", md.String())
	}
}
