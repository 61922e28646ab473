package runner

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// advisedHypotheses is one claim on the advised cell, under rules whose
// unlocked design makes the run exploratory (probe steps shortened).
const advisedHypotheses = `rules: paired-v2
hypotheses:
  - id: A1
    claim: The advised strategy gets no write 503s under slow writes.
    source: test
    metric: write_rejections
    cell: {strategy: advised, scenario: slow-write, cpu: cpus-1}
    op: "=="
    threshold: 0
`

// loadAdvised is the experiment spec and advisedHypotheses, written in dir.
func loadAdvised(t *testing.T, dir, spec string) (design.Spec, []design.Hypothesis) {
	t.Helper()
	sp, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", spec))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", advisedHypotheses), sp)
	if err != nil {
		t.Fatal(err)
	}
	return sp, hs
}

// The advice's rules, exactly: the runner probes the enrichment API, then
// the system of record, of the real mock service under slow writes, and
// advises fewer write permits than the 13 concurrent writes where 503s
// begin (6 workers and 6 queue slots). The probes, the service and the
// wire between them (in memory) share a synctest bubble's fake clock, so
// every step sees exactly the service's shape, whatever the machine does.
func TestAdviseUnderAFakeClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		spec, hs := loadAdvised(t, t.TempDir(), exptest.AdvisedSpec)
		mcfg := config.Default()
		mcfg.Seed, mcfg.TimeScale = spec.Seed, spec.TimeScale
		m := mocktest.Start(t, mocktest.Options{Config: mcfg, InMemory: true})
		var probed []string
		r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Target: m.URL, MockConfig: mcfg, Dial: m.Dial},
			heard{advising: func(sc, dep string) { probed = append(probed, sc+"/"+dep) }})
		ctx := context.Background()
		mock, err := r.checkMock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := r.newExecution(mock).adviseAll(ctx)["slow-write"]
		if a == nil || a.Failed != "" || len(a.Probes) != 2 || a.Shortened == "" || strings.Join(probed, ",") != "slow-write/enrichment,slow-write/records" {
			t.Fatalf("advice %+v; probed %v", a, probed)
		}
		rec := a.Probes["records"]
		// The exploratory probe's window: the call timeout (2 s at 0.2).
		if w := rec.Steps[0].WindowSeconds; math.Abs(w-0.4) > 1e-9 {
			t.Errorf("window %v s, want the call timeout 0.4 s", w)
		}
		// Up to 12 concurrent writes the service takes every one; the 13th
		// has neither a worker nor a queue slot.
		for _, st := range rec.Steps {
			if (st.Concurrency <= 12) != (st.Rejected == 0) || st.OK == 0 {
				t.Errorf("records at %d: %d ok, %d rejected", st.Concurrency, st.OK, st.Rejected)
			}
		}
		rb, permits := rec.RejectionsBeginAt, a.Strategy.Permits["records"]
		if rb == nil || *rb != 13 || permits < 1 || permits >= *rb || a.Strategy.RecordsInFlight < 1 {
			t.Errorf("records: rejections from %v, permits %d; strategy %+v", rb, permits, a.Strategy)
		}
		// On the fake clock the plateau is the station's own: 6 workers
		// over a 150 ms write at time scale 0.2, 200 writes per second, one
		// write per record; the permits are the knee, the worker count.
		want := float64(mcfg.Records.Workers) / (config.DefaultSlowWriteTime.Seconds() * spec.TimeScale)
		if a.Advice.Bottleneck != "records" || math.Abs(a.Advice.RateBound-want) > want/100 || permits != mcfg.Records.Workers {
			t.Errorf("bottleneck %s at %.2f records/s (want records at %.0f), %d write permits (want %d)",
				a.Advice.Bottleneck, a.Advice.RateBound, want, permits, mcfg.Records.Workers)
		}
	})
}

// The strategy "advised" end to end: the runner probes both dependencies
// on the real mock service under the cell's profile, advises, and runs the
// advice as a strategy file; the probes and the advice are in the results,
// and loadlab check recomputes the cells from them.
func TestAdvisedCellsEndToEnd(t *testing.T) {
	t.Parallel() // it checks counts and the advice's rules, not speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	// In real time a probe's step and a call must outlast what a busy
	// machine can stall a client for: windows of 2 s (40 lab s, a quarter
	// of it at 0.2 as the run is exploratory) over few steps, and a call
	// timeout of 2 s (10 lab s; at 0.4 s a C4 run beside two other test
	// packages once timed a write out, leaving its outcome unknown). What
	// the probes find exactly is TestAdviseUnderAFakeClock's.
	few := strings.NewReplacer("step: 1s", "step: 40s", "call_timeout: 2s", "call_timeout: 10s", "[1, 4, 16]", "[1, 16]",
		"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]", "[1, 6, 12, 13]").Replace(exptest.AdvisedSpec)
	spec, hs := loadAdvised(t, dir, few)
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	var probed []string
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg},
		heard{advising: func(sc, dep string) { probed = append(probed, sc+"/"+dep) }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Advised["slow-write"]
	if a == nil || a.Failed != "" || len(a.Probes) != 2 || strings.Join(probed, ",") != "slow-write/enrichment,slow-write/records" {
		t.Fatalf("advice %+v; probed %v", a, probed)
	}
	t.Logf("advised: %+v; bottleneck %s at %.1f records/s real; knee of records %v", a.Strategy, a.Advice.Bottleneck, a.Advice.RateBound, a.Probes["records"].Knee)
	rb := a.Probes["records"].RejectionsBeginAt
	permits := a.Strategy.Permits["records"]
	if w := a.Probes["records"].Steps[0].WindowSeconds; math.Abs(w-2) > 1e-9 {
		t.Errorf("probe window %v s, want 2 s", w)
	}
	if permits < 1 || (rb != nil && permits >= *rb) || a.Strategy.RecordsInFlight < 1 {
		t.Errorf("records: rejections from %v, permits %d; strategy %+v", rb, permits, a.Strategy)
	}
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
		}
		if run.Cell.Strategy == design.Advised && (run.Client.Params.PermitsFor("records") != permits || run.Metrics["peak_concurrent_writes"] > float64(permits)) {
			t.Errorf("advised run %d: params %+v, peak writes %v", run.Run, run.Client.Params, run.Metrics["peak_concurrent_writes"])
		}
	}
	if len(res.Verdicts) != 1 || res.Verdicts[0].ValidRuns["advised/slow-write/cpus-1"] != 3 {
		t.Errorf("verdicts %+v", res.Verdicts)
	}
	out := filepath.Join(dir, "out")
	if err := report.WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	back, err := resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := judge.Check(back, *mockCfg); err != nil {
		t.Errorf("check of the written results: %v", err)
	}
}

// advise.file: the advised cells run a strategy file under every scenario,
// without probing; a file that does not fit the lab's pipeline is refused
// at load, naming the spec's line and the strategy file's.
func TestAdvisedFromAFile(t *testing.T) {
	t.Parallel()
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	file := exptest.WriteFile(t, dir, "mine.yaml", "strategy:\n  name: mine\n  records_in_flight: 8\n  permits:\n    records: 3\n")
	// The subject is which strategy the advised cells run, not how long 8
	// records wait for 3 write permits: TinySpec's permit wait is one only a
	// stalled child could exceed.
	tiny := strings.Replace(exptest.TinySpec, "[C2, C4]", "[C4, advised]", 1)
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", tiny+"advise:\n  file: "+file+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	r := mustNew(t, Config{Spec: spec, Binary: bin, Target: url, MockConfig: *mockCfg},
		heard{advising: func(sc, dep string) { t.Errorf("probed %s/%s with a strategy file given", sc, dep) }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Advised["slow-write"]; a == nil || a.From != file || a.Strategy.Permits["records"] != 3 {
		t.Fatalf("advised %+v", a)
	}
	// The same runner runs again from nothing of the first run's: the
	// advised strategy's file, written per run and removed after it, is
	// written again.
	again, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range []*resultsfile.Results{res, again} {
		if len(res.Runs) != 6 {
			t.Fatalf("run %d of the runner: %d runs, want 6", i+1, len(res.Runs))
		}
		for _, run := range res.Runs {
			if !run.Valid() {
				t.Fatalf("run %d of the runner, %s run %d: %s: %s", i+1, run.Cell, run.Run, run.Status, run.Reason)
			}
			if run.Cell.Strategy == design.Advised && (run.Client.RecordsInFlight != 8 || run.Metrics["peak_concurrent_writes"] > 3) {
				t.Errorf("advised run %d: %d in flight, peak writes %v", run.Run, run.Client.RecordsInFlight, run.Metrics["peak_concurrent_writes"])
			}
		}
	}
	bad := exptest.WriteFile(t, dir, "bad.yaml", "strategy:\n  name: bad\n  records_in_flight: 8\n  permits:\n    ledger: 3\n")
	_, err = design.LoadSpec(exptest.WriteFile(t, dir, "spec2.yaml", strings.Replace(exptest.TinySpec, "[C2, C4]", "[C4, advised]", 1)+"advise:\n  file: "+bad+"\n"))
	if err == nil || !strings.Contains(err.Error(), "spec2.yaml:13: advise.file: ") || !strings.Contains(err.Error(), `bad.yaml:5: strategy.permits.ledger`) {
		t.Errorf("a strategy file for another pipeline: %v", err)
	}
}
