package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// A tiny matrix end to end: 2 strategies × 1 scenario × 2 runs, 30 records,
// time scale 0.05, each run a CPU-limited child process of the real binary
// against an in-process mock service.
func TestTinyMatrixEndToEnd(t *testing.T) {
	t.Parallel() // it checks counts, statuses and draws, not speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hpath := exptest.WriteFile(t, dir, "h.yaml", "rules: paired-v2\n"+exptest.TinyHypotheses)
	hs, err := design.LoadHypotheses(hpath, spec)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := design.Preregister(hpath, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg, Lock: lock},
		heard{runDone: func(resultsfile.RunRecord) { progress++ }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 6 || progress != 6 {
		t.Fatalf("%d runs, %d progress reports; want 6", len(res.Runs), progress)
	}
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
		}
		m := run.Metrics
		if m["complete"]+m["incomplete"]+m["write_rejected"]+m["failed"] != 30 {
			t.Errorf("%s run %d: states do not add up to 30: %v", run.Cell, run.Run, m)
		}
		if run.Seconds <= 0 {
			t.Errorf("%s run %d: wall time %v not recorded", run.Cell, run.Run, run.Seconds)
		}
		if run.Mechanism == "" || m["gomaxprocs"] < 1 {
			t.Errorf("%s: mechanism %q, GOMAXPROCS %v", run.Cell, run.Mechanism, m["gomaxprocs"])
		}
	}
	if len(res.Cells) != 2 || res.Cells[0].Stats["accepted_per_second"].N != 3 || res.Cells[0].Valid != 3 {
		t.Errorf("cells %+v", res.Cells)
	}
	for _, v := range res.Verdicts {
		if v.Verdict != resultsfile.Supported || v.Exploratory != "" || v.ValidRuns["C4/slow-write/cpus-1"] != 3 || v.Cells[0].Bootstrap == nil {
			t.Errorf("%s: %s %+v", v.ID, v.Verdict, v)
		}
	}
	out := filepath.Join(dir, "out")
	if err := report.WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(md), "| C4 |") || !strings.Contains(string(md), "**supported**") {
		t.Errorf("report.md lacks the table or verdicts:\n%s", md)
	}
	if strings.Count(string(page), "<svg") < 4 || !strings.Contains(string(page), `class="supported"`) {
		t.Errorf("report.html has %d charts", strings.Count(string(page), "<svg"))
	}
	back, err := resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := judge.Check(back, *mockCfg); err != nil {
		t.Errorf("check of the written results: %v", err)
	}
	checkCatchesEdits(t, filepath.Join(out, "results.json"), *mockCfg)
	independentAndPaired(t, res)
}

// Run k of every cell uses the seed spec.Seed + k: the two cells of a run
// drew the same enrichment service times (both sent all 90 calls), and
// the runs drew different ones. Every run reconciled.
func independentAndPaired(t *testing.T, res *resultsfile.Results) {
	t.Helper()
	planned := map[int][]float64{} // run -> per cell
	for _, run := range res.Runs {
		if run.Seed != res.Experiment.Seed+uint32(run.Run) || run.Server.Seed != run.Seed {
			t.Errorf("%s run %d: seed %d, server's %d; want %d", run.Cell, run.Run, run.Seed, run.Server.Seed, res.Experiment.Seed+uint32(run.Run))
		}
		e := run.Server.Stations["enrichment"]
		if e.Draws != 90 {
			t.Fatalf("%s run %d: %d enrichment draws, want 90 (client: %v)", run.Cell, run.Run, e.Draws, run.Metrics)
		}
		planned[run.Run] = append(planned[run.Run], e.PlannedLabSeconds)
		rc := run.Reconciliation
		if rc == nil || len(rc.Differences) > 0 || rc.Client.WritesCreated != 30-int(run.Metrics["write_rejected"]) ||
			rc.Client.CallsSent["enrichment"] != rc.Server.Requests["enrichment"] {
			t.Errorf("%s run %d: reconciliation %+v", run.Cell, run.Run, rc)
		}
		if run.QuietBefore == nil || !run.QuietBefore.Quiet || run.QuietAfter == nil || !run.QuietAfter.Quiet {
			t.Errorf("%s run %d: quiet before %+v, after %+v", run.Cell, run.Run, run.QuietBefore, run.QuietAfter)
		}
	}
	for k, p := range planned {
		if len(p) != 2 || p[0] != p[1] {
			t.Errorf("run %d: the cells drew %v lab seconds of enrichment; want the same draws", k, p)
		}
	}
	if planned[1][0] == planned[2][0] || planned[2][0] == planned[3][0] {
		t.Errorf("runs 1–3 drew %v, %v, %v lab seconds: want independent draws", planned[1], planned[2], planned[3])
	}
}

// checkCatchesEdits edits copies of a results file: a raw figure (a run's
// client result), a derived one only (a cell's median), and a run without
// its raw data. Check fails on each, naming the difference.
func checkCatchesEdits(t *testing.T, path string, mockCfg config.Config) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name string, f func(doc map[string]any)) error {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		b, _ := json.Marshal(doc)
		p := filepath.Join(t.TempDir(), "results.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := resultsfile.ReadResults(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = judge.Check(res, mockCfg)
		return err
	}
	run := func(doc map[string]any, i int) map[string]any { return doc["runs"].([]any)[i].(map[string]any) }
	err = edit("raw", func(doc map[string]any) {
		c := run(doc, 2)["client"].(map[string]any)
		c["writes_created"] = c["writes_created"].(float64) - 1
	})
	if err == nil || !strings.Contains(err.Error(), "run 2 of") || !strings.Contains(err.Error(), "status recomputed \"invalid\"") {
		t.Errorf("a raw figure edited: check says %v; want run 2's status recomputed invalid", err)
	}
	err = edit("derived", func(doc map[string]any) {
		st := doc["cells"].([]any)[1].(map[string]any)["stats"].(map[string]any)["accepted_per_second"].(map[string]any)
		st["median"] = st["median"].(float64) * 1.01
	})
	if err == nil || !strings.Contains(err.Error(), "cell C4/slow-write/cpus-1: summary recomputed") {
		t.Errorf("a derived figure edited: check says %v; want the cell's summary named", err)
	}
	err = edit("verdict", func(doc map[string]any) {
		doc["verdicts"].([]any)[0].(map[string]any)["verdict"] = resultsfile.Refuted
	})
	if err == nil || !strings.Contains(err.Error(), "verdict T1") {
		t.Errorf("a verdict edited: check says %v", err)
	}
	err = edit("no raw data", func(doc map[string]any) { delete(run(doc, 0), "client") })
	if !errors.Is(err, judge.ErrNoRawData) {
		t.Errorf("a run without its client result: check says %v; want ErrNoRawData", err)
	}
}

// A client that cannot run marks its cell failed with the reason; the
// matrix goes on.
func TestFailedRunIsRecorded(t *testing.T) {
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	url, _ := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	r := mustNew(t, Config{Spec: spec, Binary: filepath.Join(dir, "no-such-binary"), Target: url}, nil)
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 6 || res.Runs[0].Status != resultsfile.RunFailed || res.Cells[0].Valid != 0 || len(res.Cells[0].Excluded) != 3 {
		t.Errorf("runs %+v", res.Runs)
	}
}

// A client run that hangs is killed at its wall-clock limit, and the run
// fails saying so; the matrix goes on.
func TestHungRunIsKilledAtItsLimit(t *testing.T) {
	t.Parallel() // its runs only wait; it checks statuses, not speed
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hang := exptest.WriteFile(t, dir, "hang.sh", "#!/bin/sh\nexec sleep 30\n")
	if err := os.Chmod(hang, 0o755); err != nil {
		t.Fatal(err)
	}
	url, _ := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	r := mustNew(t, Config{Spec: spec, Binary: hang, Target: url, RunLimit: 300 * time.Millisecond}, nil)
	start := time.Now()
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("six hung runs took %v", el)
	}
	for _, run := range res.Runs {
		if run.Status != resultsfile.RunFailed || !strings.Contains(run.Reason, "wall-clock limit") {
			t.Errorf("%s: %s %q, want failed at the wall-clock limit", run.Cell, run.Status, run.Reason)
		}
	}
}

// The runner's metrics count runs by cell and status and pass the linter.
func TestRunnerMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	c := design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}
	m.RunDone(resultsfile.RunRecord{Cell: c, Status: resultsfile.RunValid, Metrics: map[string]float64{"accepted_per_second": 35, "write_rejections": 0}}, 0, 0, 0)
	m.RunDone(resultsfile.RunRecord{Cell: c, Status: resultsfile.RunFailed, Reason: "crashed"}, 0, 0, 0)
	m.RunDone(resultsfile.RunRecord{Cell: c, Status: resultsfile.RunInvalid, Reason: "201 not stored", Metrics: map[string]float64{"accepted_per_second": 99}}, 0, 0, 0)
	want := `
# HELP loadlab_experiment_runs_total Client runs finished, by cell and status (valid, failed, contaminated or invalid).
# TYPE loadlab_experiment_runs_total counter
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="failed",strategy="C4"} 1
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="invalid",strategy="C4"} 1
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="valid",strategy="C4"} 1
# HELP loadlab_experiment_last_accepted_per_lab_second Accepted records per lab second of the cell's last run.
# TYPE loadlab_experiment_last_accepted_per_lab_second gauge
loadlab_experiment_last_accepted_per_lab_second{cpu="cpus-1",scenario="slow-write",strategy="C4"} 35
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadlab_experiment_runs_total", "loadlab_experiment_last_accepted_per_lab_second"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}
