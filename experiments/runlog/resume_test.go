package runlog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// scaleOne serves the calibration's mock services at time scale 1.
type scaleOne struct{ t *testing.T }

func (s scaleOne) StartMock(c config.Config) (string, func() error, error) {
	m := mocktest.Start(s.t, mocktest.Options{Config: c})
	return m.URL, m.Stop, nil
}

// A calibrated experiment (2 cells × 3 runs, the first 2 of each paired
// with a twin at time scale 1), logged as it runs, then cut as a kill
// would cut it: after C4's run 2 and before its twin. Resumed, only what
// is missing runs: C4's run 2 again with its twin (a pair counts only
// whole), and both cells' run 3; the results hold every unit once in
// order, each with its seed, every twin, and say which attempt measured
// how many; check recomputes them. Resumed against another experiment
// file, nothing runs.
func TestResumeRunsOnlyWhatIsMissing(t *testing.T) {
	t.Parallel() // it counts runs and checks their order, not their speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec+"calibration: {pairs: 2, max_bias: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", exptest.TinyRateHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	cfg := runner.Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg, Mocks: scaleOne{t},
		ExperimentSHA256: "spec", Journal: Create(dir, Invocation{})}
	run := func(cfg runner.Config, heard func(resultsfile.RunRecord)) (*resultsfile.Results, error) {
		r, err := runner.New(cfg, ranHeard(heard))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return r.Run(ctx)
	}
	if _, err := run(cfg, nil); err != nil {
		t.Fatal(err)
	}
	c4run2 := plan.Unit{Cell: design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}, Run: 2}
	cutAfterRun(t, dir, c4run2)
	l, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Resume.Runs) != 4 || len(l.Resume.Twins) != 3 || len(l.Missing()) != 2 {
		t.Fatalf("the cut log: %d runs, %d twins, missing %v", len(l.Resume.Runs), len(l.Resume.Twins), l.Missing())
	}
	other := cfg
	other.ExperimentSHA256, other.Journal, other.Resume = "edited", Append(l), &l.Resume
	if _, err := run(other, func(resultsfile.RunRecord) { t.Error("a run of another experiment file ran") }); !errors.Is(err, runner.ErrNotSameExperiment) ||
		!strings.Contains(err.Error(), "the experiment file (SHA-256) differs: spec, now edited") {
		t.Fatalf("resumed against another experiment file: %v", err)
	}
	var ran []plan.Unit
	cfg.Journal, cfg.Resume = Append(l), &l.Resume
	res, err := run(cfg, func(r resultsfile.RunRecord) { ran = append(ran, plan.Unit{Cell: r.Cell, Run: r.Run}) })
	if err != nil {
		t.Fatal(err)
	}
	units := plan.Units(spec)
	if want := []plan.Unit{c4run2, units[4], units[5]}; !slices.Equal(ran, want) {
		t.Errorf("resumed, ran %v; want %v", ran, want)
	}
	checkWhole(t, res, units)
	if a := res.Attempts; len(a) != 2 || a[0].Runs != 3 || a[0].Twins != 3 || a[1].Runs != 3 || a[1].Twins != 1 {
		t.Errorf("attempts %+v; want 3 runs and 3 twins, then 3 runs and 1 twin", a)
	}
	if _, err := judge.Check(res, *mockCfg); err != nil {
		t.Errorf("check: %v", err)
	}
	if l, err := Read(dir); err != nil || len(l.Missing()) != 0 || len(l.Resume.Twins) != 4 || len(l.Resume.Attempts) != 2 {
		t.Errorf("the log after: %v; missing %v, %d twins, %d attempts (the refused one logs none)", err, l.Missing(), len(l.Resume.Twins), len(l.Resume.Attempts))
	}
}

// checkWhole checks that res holds every unit once, in order, each with
// its seed, and every twin of the calibration.
func checkWhole(t *testing.T, res *resultsfile.Results, units []plan.Unit) {
	t.Helper()
	var got []plan.Unit
	for _, r := range res.Runs {
		got = append(got, plan.Unit{Cell: r.Cell, Run: r.Run})
		if r.Seed != plan.RunSeed(res.Experiment, r.Run) {
			t.Errorf("%s run %d: seed %d, want %d", r.Cell, r.Run, r.Seed, plan.RunSeed(res.Experiment, r.Run))
		}
	}
	if !slices.Equal(got, units) || res.Partial != "" {
		t.Errorf("runs %v (partial %q); want %v", got, res.Partial, units)
	}
	if b := res.TimeScaleBias; b == nil || len(b.Twins) != 4 || len(b.Measured) != 2 || b.Incomplete != "" {
		t.Errorf("calibration %+v; want 4 twins, 2 cells measured", b)
	}
}

// cutAfterRun cuts dir's log after the line of unit u's run, as a kill
// before its twin would.
func cutAfterRun(t *testing.T, dir string, u plan.Unit) {
	t.Helper()
	path := filepath.Join(dir, Name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, text := range lines {
		var ln line
		if err := json.Unmarshal([]byte(text), &ln); err == nil && ln.Kind == kindRun && ln.Run.Cell == u.Cell && ln.Run.Run == u.Run {
			if err := os.WriteFile(path, []byte(strings.Join(lines[:i+1], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no line of %v in the log", u)
}

// ranHeard hears each run that ends.
type ranHeard func(resultsfile.RunRecord)

func (h ranHeard) BiasMeasured(resultsfile.CellBias, float64)     {}
func (h ranHeard) Advising(string, string)                        {}
func (h ranHeard) RunStarting(plan.Unit, int, int, time.Duration) {}
func (h ranHeard) RunDone(r resultsfile.RunRecord, _, _ int, _ time.Duration) {
	if h != nil {
		h(r)
	}
}
