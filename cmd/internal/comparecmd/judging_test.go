package comparecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// resultsOf writes an experiment's results folder of cells C4 and C2 of
// the healthy scenario, five valid runs each (seeds 1 to 5), the metrics
// of each run from metrics.
func resultsOf(t *testing.T, dir, name string, metrics func(c design.Cell, run int) map[string]float64) string {
	t.Helper()
	spec := design.Spec{Name: name, Strategies: []string{"C4", "C2"}, Scenarios: []string{"healthy"}, CPUs: []design.CPUSetting{{Name: "cpus-1", CPUs: 1}}}
	res := resultsfile.Results{Format: resultsfile.ResultsFormat, Experiment: spec}
	for _, c := range spec.Cells() {
		for run := 1; run <= 5; run++ {
			res.Runs = append(res.Runs, resultsfile.RunRecord{Cell: c, Run: run, Seed: uint32(run), Status: resultsfile.RunValid,
				Metrics: metrics(c, run)})
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := resultsfile.WriteJSON(filepath.Join(dir, name, "results.json"), res); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// The family Holm counts is every comparison of every cell whose values
// vary: two cells of three varying metrics are 6, which 5 runs a side
// reach; one stray timeout after makes 7, which they do not, and the
// comparison exits 2 pointing to --cell and --metric, with which it is
// judged again.
func TestCompareFamilyAcrossCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	metrics := func(stray bool) func(c design.Cell, run int) map[string]float64 {
		return func(c design.Cell, run int) map[string]float64 {
			rate := 30 + float64(run)
			m := map[string]float64{"accepted_per_second": rate, "duration_seconds": 100 / rate, "rejected.records": float64(run % 3),
				"call_timeouts": 0}
			if stray && c.Strategy == "C2" && run == 3 {
				m["call_timeouts"] = 1
			}
			return m
		}
	}
	before := resultsOf(t, dir, "a", metrics(false))
	same, stray := resultsOf(t, filepath.Join(dir, "same"), "a", metrics(false)), resultsOf(t, filepath.Join(dir, "stray"), "a", metrics(true))
	var out bytes.Buffer
	if err := Main([]string{before, same}, &out); err != nil || !strings.Contains(out.String(), "over the 6 comparisons") {
		t.Errorf("6 comparisons: %v\n%s", err, out.String())
	}
	out.Reset()
	err := Main([]string{before, stray}, &out)
	if exitOf(err) != 2 || !strings.Contains(err.Error(), "over 7 comparisons") ||
		!strings.Contains(err.Error(), "compare fewer metrics (--metric) or cells (--cell)") {
		t.Errorf("a stray timeout: exit %d, %v", exitOf(err), err)
	}
	out.Reset()
	if err := Main([]string{before, stray, "--cell", "C2/healthy/cpus-1"}, &out); err != nil {
		t.Errorf("--cell C2: %v\n%s", err, out.String())
	}
}

// The time scale is part of a configuration: a side mixing two is refused
// naming it, and a change of it between the sides is printed; for runs
// and for loads.
func TestCompareTimeScale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var tenth, fifth, mixed []any
	for i := range 5 {
		r := runResult(t, 6, 30+float64(i))
		tenth = append(tenth, r)
		r.TimeScale = 0.2
		fifth = append(fifth, r)
		if i%2 == 0 {
			r = runResult(t, 6, 30)
		}
		mixed = append(mixed, r)
	}
	a, b, m := writeJSON(t, dir, "tenth.json", tenth...), writeJSON(t, dir, "fifth.json", fifth...), writeJSON(t, dir, "mixed.json", mixed...)
	var out bytes.Buffer
	if err := Main([]string{m, a}, &out); exitOf(err) != 2 || !strings.Contains(err.Error(), "holds runs of 2 configurations") ||
		!strings.Contains(err.Error(), "time_scale: 0.1 → 0.2") {
		t.Errorf("time scales mixed: exit %d, %v", exitOf(err), err)
	}
	Main([]string{a, b}, &out)
	if !strings.Contains(out.String(), "changed: time_scale: 0.1 → 0.2") {
		t.Errorf("time scale changed:\n%s", out.String())
	}
	load := loadgen.Result{Requests: 10, OnTime: 10, Scheduled: 10, TimeScale: 0.1, Scenario: loadgen.Scenario{Schedule: loadgen.Schedule{Mode: "open"}}}
	other := load
	other.TimeScale = 0.5
	l := writeJSON(t, dir, "loads.json", load, other, load, load, load)
	if err := Main([]string{l, l}, &out); exitOf(err) != 2 || !strings.Contains(err.Error(), "time_scale: 0.1 → 0.5") {
		t.Errorf("loads' time scales mixed: exit %d, %v", exitOf(err), err)
	}
}

// A difference's interval gives each bound with its unit and sign, as
// its estimate: none refused before, about 40 after.
func TestCompareDifferenceUnits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var before, after []any
	for i := range 5 {
		before = append(before, runResult(t, 6, 30+float64(i)))
		r := runResult(t, 6, 30+float64(i))
		r.Calls["records"][budgets.Rejected] = 40 + 2*i
		after = append(after, r)
	}
	b, a := writeJSON(t, dir, "before.json", before...), writeJSON(t, dir, "after.json", after...)
	var out bytes.Buffer
	err := Main([]string{b, a, "--metric", "rejected.records"}, &out)
	if exitOf(err) != ExitRegression || !strings.Contains(out.String(), "+44 calls [+40 calls, +48 calls]") {
		t.Errorf("exit %d, %v\n%s", exitOf(err), err, out.String())
	}
}
