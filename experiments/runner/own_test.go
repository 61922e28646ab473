package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// startCopies serves each run's virtual copies on loopback until the test
// ends (or the run stops them).
type startCopies struct{ t *testing.T }

func (s startCopies) StartCopies(cfg config.Copies) (map[string]string, func() error, error) {
	c := mocktest.StartCopies(s.t, mocktest.CopiesOptions{Config: cfg})
	return c.URLs, c.Stop, nil
}

// ownHypotheses are claims on OwnSpec's cells: C2 overloads the orders
// copy as probed, the strategy file's 3 write permits never do, and
// never offer more than 3 writes at once.
const ownHypotheses = `rules: paired-v2
hypotheses:
  - id: O1
    claim: Unbounded, the orders service refuses writes.
    source: test
    metric: write_rejections
    cell: {strategy: C2, scenario: as-probed, cpu: cpus-1}
    op: ">"
    threshold: 0
  - id: O2
    claim: 3 write permits draw no write rejections as probed.
    source: test
    metric: write_rejections
    cell: {strategy: mine, scenario: as-probed, cpu: cpus-1}
    op: "=="
    threshold: 0
  - id: O4
    claim: The advised strategy draws no write rejections as probed.
    source: test
    metric: write_rejections
    cell: {strategy: advised, scenario: as-probed, cpu: cpus-1}
    op: "=="
    threshold: 0
  - id: O5
    claim: 3 write permits keep at most 3 orders calls in flight, orders slowed threefold.
    source: test
    metric: peak_in_flight_orders
    cell: {strategy: mine, scenario: slow-orders, cpu: cpus-1}
    op: "<="
    threshold: 3
  - id: O3
    claim: 3 write permits offer at most 3 writes at once, orders slowed threefold.
    source: test
    metric: peak_concurrent_writes
    cell: {strategy: mine, scenario: slow-orders, cpu: cpus-1}
    op: "<="
    threshold: 3
`

// An experiment on one's own services end to end: every cell of C2 and a
// strategy file under three scenarios of the copies (as probed, orders
// three times as slow, half its workers), each run a CPU-limited child
// against copies started for it, every run valid and reconciled with the
// copies' counts, the verdicts as the copies' capacity says, and check
// recomputes them from the raw data.
func TestOwnServicesExperiment(t *testing.T) {
	t.Parallel() // it checks counts and statuses, not speed
	bin := exptest.BuildLoadlab(t)
	dir := exptest.OwnServices(t, t.TempDir())
	// The originals: a service that counts what reaches it, which nothing
	// of the experiment may.
	var reached atomic.Int64
	original := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer original.Close()
	exptest.WriteFile(t, dir, "shop.yaml", strings.ReplaceAll(exptest.OwnPipeline, "http://127.0.0.1:9", original.URL))
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", exptest.OwnSpec))
	if err != nil {
		t.Fatal(err)
	}
	hpath := exptest.WriteFile(t, dir, "h.yaml", ownHypotheses)
	hs, err := design.LoadHypotheses(hpath, spec)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := design.Preregister(hpath, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Copies: startCopies{t}, Lock: lock}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 27 {
		t.Fatalf("%d runs, want 3 strategies × 3 scenarios × 3 runs", len(res.Runs))
	}
	for sc, a := range res.Advised {
		t.Logf("advised for %s: %+v (%s)", sc, a.Strategy, a.Failed)
	}
	for _, run := range res.Runs {
		m := run.Metrics
		if !run.Valid() {
			t.Errorf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
			continue
		}
		if m["complete"]+m["incomplete"]+m["write_rejected"]+m["failed"] != 30 || run.WriteStation != "orders" {
			t.Errorf("%s run %d: states do not add up to 30, or the write station is %q: %v", run.Cell, run.Run, run.WriteStation, m)
		}
		rc := run.Reconciliation
		if rc.Server.Requests["orders"] != rc.Client.CallsSent["orders"] || rc.Server.Requests["stock"] == 0 || run.Server.Seed != run.Seed {
			t.Errorf("%s run %d: reconciliation %+v, seed %d", run.Cell, run.Run, rc, run.Server.Seed)
		}
	}
	for _, c := range res.Cells {
		t.Logf("%s: accepted/s %.1f, write 503s %.0f, peak writes %.0f, stock refused %.0f, incomplete %.0f", c.Cell, c.Stats["accepted_per_second"].Median,
			c.Stats["write_rejections"].Median, c.Stats["peak_concurrent_writes"].Median, c.Stats["stock_refused"].Median, c.Stats["incomplete"].Median)
	}
	for _, v := range res.Verdicts {
		if v.Verdict != resultsfile.Supported {
			t.Errorf("%s: %s %+v", v.ID, v.Verdict, v)
		}
	}
	if _, err := judge.Check(res, res.Experiment.MockConfig()); err != nil {
		t.Errorf("check: %v", err)
	}
	ownReport(t, res)
	if n := reached.Load(); n != 0 {
		t.Errorf("the original services received %d requests during the experiment; want none", n)
	}
}

// ownReport writes the experiment's report and reads what it says of the
// copies, the scenarios and the cells.
func ownReport(t *testing.T, res *resultsfile.Results) {
	t.Helper()
	out := t.TempDir()
	if err := report.WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Pipeline shop (stock, orders; the write: orders)", "| orders | orders.json | POST | 3 | 3 | 503 | none |",
		"slow-orders: orders service times ×3", "half-orders: orders workers 3 → 2 (×0.5)", "mine — from mine.yaml: 10 records in flight; orders 3 permits",
		"| peak calls stock | refused stock | peak calls orders | refused orders |", "probed on its virtual copy as the scenario shapes it"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "enrichment") || strings.Contains(string(md), "phased: see below") {
		t.Errorf("report.md speaks of the lab's services:\n%s", md)
	}
}

// A dependency without a copy runs against its base_url, a real service,
// at time scale 1: its calls are not reconciled (the reconciliation says
// so), the copies' are, and the real service receives exactly the calls
// the client sent it.
func TestOwnServicesWithARealDependency(t *testing.T) {
	t.Parallel() // it checks counts and statuses, not speed
	bin := exptest.BuildLoadlab(t)
	dir := exptest.OwnServices(t, t.TempDir())
	var reached atomic.Int64
	stock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer stock.Close()
	exptest.WriteFile(t, dir, "shop.yaml", strings.Replace(exptest.OwnPipeline, "http://127.0.0.1:9", stock.URL, 1))
	text := strings.NewReplacer("  stock: {probe: stock.json}\n", "", "time_scale: 0.1", "time_scale: 1", "records: 30", "records: 20",
		"[C2, advised, mine]", "[C2, mine]", "  - name: slow-orders\n    orders: {service_time: 3}\n", "").Replace(exptest.OwnSpec)
	text = text[:strings.Index(text, "advise:")]
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if got := spec.Own.Real(); len(got) != 1 || got[0] != "stock" {
		t.Fatalf("real dependencies %v, want stock", got)
	}
	r := mustNew(t, Config{Spec: spec, Binary: bin, Copies: startCopies{t}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, run := range res.Runs {
		rc := run.Reconciliation
		if !run.Valid() || !strings.Contains(rc.Partial, "stock went to real services") || rc.Server.Requests["orders"] != rc.Client.CallsSent["orders"] {
			t.Errorf("%s run %d: %s: %s; reconciliation %+v", run.Cell, run.Run, run.Status, run.Reason, rc)
		}
		sent += run.Client.CallsSent["stock"]
	}
	if len(res.Runs) != 12 || sent == 0 || int64(sent) != reached.Load() {
		t.Errorf("%d runs; the client sent stock %d calls, the real stock received %d", len(res.Runs), sent, reached.Load())
	}
	if _, err := design.LoadSpec(exptest.WriteFile(t, dir, "scaled.yaml", strings.Replace(text, "time_scale: 1", "time_scale: 0.1", 1))); err == nil ||
		!strings.Contains(err.Error(), "stock has no virtual copy, so its calls go to its base_url") {
		t.Errorf("a real dependency at time scale 0.1: %v", err)
	}
}
