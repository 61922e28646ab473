package comparecmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/beforeafter"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// runResult is a run of C4 (with its write budget, permits) at rate
// records per lab second.
func runResult(t *testing.T, permits int, rate float64) records.Result {
	t.Helper()
	s, err := strategy.Parse("C4")
	if err != nil {
		t.Fatal(err)
	}
	s.Permits["records"] = permits
	return records.Result{Strategy: "C4", Params: s, Records: 100, Complete: 100, DurationSeconds: 10 / rate, TimeScale: 0.1,
		AcceptedPerLabSecond: rate, Calls: map[string]map[budgets.Class]int{"enrichment": {budgets.OK: 300}, "records": {budgets.OK: 100}}}
}

// writeJSON writes each value, one after another, to dir/name.
func writeJSON(t *testing.T, dir, name string, vs ...any) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, v := range vs {
		json.NewEncoder(&b).Encode(v)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func exitOf(err error) int {
	var ee *cli.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// Runs of loadlab run --json, a folder of files against a file holding
// several: the same rates are no change (exit 0); half the rate is worse
// (exit 99, naming the metric and cell, what changed printed); JSON and
// Markdown carry the same.
func TestCompareRunFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rates := []float64{30, 31, 29.5, 30.4, 30.9}
	var same, half []any
	for i, r := range rates {
		writeJSON(t, filepath.Join(dir, "before"), "run"+string(rune('a'+i))+".json", runResult(t, 6, r))
		same = append(same, runResult(t, 6, rates[(i+2)%5]*1.01))
		half = append(half, runResult(t, 3, r/2))
	}
	b := filepath.Join(dir, "before")
	s := writeJSON(t, dir, "same.json", same...)
	h := writeJSON(t, dir, "half.json", half...)
	var out bytes.Buffer
	if err := Main([]string{b, s}, &out); err != nil {
		t.Fatalf("same: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "no regression") || strings.Contains(out.String(), "changed:") {
		t.Errorf("same:\n%s", out.String())
	}
	out.Reset()
	err := Main([]string{"--min-effect", "10%", b, h}, &out)
	if exitOf(err) != ExitRegression || !strings.Contains(err.Error(), "accepted_per_second in C4") ||
		!strings.Contains(err.Error(), "minimum effect of 10%") {
		t.Errorf("half: exit %d, %v", exitOf(err), err)
	}
	for _, want := range []string{"changed: strategy.permits.records: 6 → 3", "0.5× [", "records/lab s", "worse", "REGRESSION"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("half: no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	Main([]string{b, h, "--json"}, &out)
	var got outcome
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Regressions) != 2 || got.Report.Comparisons != 2 ||
		got.Before.Runs != 5 || got.Report.Rows[0].Metric.Unit != "records/lab s" {
		t.Errorf("--json: %v, %+v", err, got)
	}
	out.Reset()
	Main([]string{"--markdown", b, h, "--metric", "accepted_per_second"}, &out)
	if !strings.Contains(out.String(), "| C4 | accepted_per_second | 30.4 records/lab s (5) | 15.2 records/lab s (5) |") ||
		!strings.Contains(out.String(), "**worse**") || strings.Contains(out.String(), "duration_seconds") {
		t.Errorf("--markdown:\n%s", out.String())
	}
}

// Bad input exits 2 saying what differs: kinds, configurations within a
// side, a metric unknown (with a near name), too few runs (how many are
// needed), a file that is no result, --json with --markdown.
func TestCompareRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var runs, mixed, three []any
	for i := range 5 {
		runs = append(runs, runResult(t, 6, 30+float64(i)))
		mixed = append(mixed, runResult(t, 6-i%2, 30))
		if i < 3 {
			three = append(three, runResult(t, 6, 30+float64(i)))
		}
	}
	r := writeJSON(t, dir, "runs.json", runs...)
	load := loadgen.Result{Requests: 10, OnTime: 10, Scheduled: 10, Scenario: loadgen.Scenario{Schedule: loadgen.Schedule{Mode: "open"}}}
	l := writeJSON(t, dir, "loads.json", load, load, load, load, load)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{r, l}, "holds loadlab run --json results, after"},
		{[]string{writeJSON(t, dir, "mixed.json", mixed...), r}, "holds runs of 2 configurations"},
		{[]string{r, r, "--metric", "acepted_per_second"}, `no metric "acepted_per_second" for runs; there are: accepted_per_second`},
		{[]string{r, r, "--metric", "acepted_per_second"}, "(did you mean accepted_per_second?)"},
		{[]string{writeJSON(t, dir, "three.json", three...), r}, "needs at least 5 runs on each side"},
		{[]string{writeJSON(t, dir, "other.json", map[string]int{"x": 1}), r}, "not the JSON of loadlab run --json or loadlab load --json"},
		{[]string{r, r, "--json", "--markdown"}, "--json and --markdown: give one"},
		{[]string{r}, "want BEFORE and AFTER"},
		{[]string{r, r, "--min-effect", "x"}, `"x" is not a number`},
		{[]string{r, r, "--min-effect", "5"}, "5 as a fraction is 500%: for 5% write 5% or 0.05"},
		{[]string{r, r, "--min-effect", "1"}, "a bare fraction must be below 1"},
		{[]string{r, r, "--min-effect", "-1%"}, "must be at least 0 and below 10 (0% to under 1000%"},
		{[]string{r, r, "--min-effect", "1000%"}, "must be at least 0 and below 10"},
		{[]string{r, filepath.Join(dir, "none-*.json")}, "no file matches"},
	} {
		var out bytes.Buffer
		err := Main(c.args, &out)
		if exitOf(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitOf(err), err, c.want)
		}
	}
}

// results writes an experiment's results folder: cells C4 and C2 of the
// healthy scenario, five valid runs each (seeds 1 to 5), the C4 rate
// times c4, one invalid run that does not count.
func results(t *testing.T, dir, name string, c4 float64) string {
	t.Helper()
	spec := design.Spec{Name: name, Strategies: []string{"C4", "C2"}, Scenarios: []string{"healthy"}, CPUs: []design.CPUSetting{{Name: "cpus-1", CPUs: 1}}}
	res := resultsfile.Results{Format: resultsfile.ResultsFormat, Experiment: spec}
	for _, c := range spec.Cells() {
		for run := 1; run <= 5; run++ {
			rate := 30 + float64(run)
			if c.Strategy == "C4" {
				rate *= c4
			}
			res.Runs = append(res.Runs, resultsfile.RunRecord{Cell: c, Run: run, Seed: uint32(run), Status: resultsfile.RunValid,
				Metrics: map[string]float64{"accepted_per_second": rate, "duration_seconds": 100 / rate}})
		}
		res.Runs = append(res.Runs, resultsfile.RunRecord{Cell: c, Run: 6, Seed: 6, Status: resultsfile.RunInvalid,
			Metrics: map[string]float64{"accepted_per_second": 1}})
	}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := resultsfile.WriteJSON(filepath.Join(dir, name, "results.json"), res); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// Results folders: cell by cell over their valid runs; a slower C4 is
// named with its cell (over 2 comparisons: --metric); different
// experiments are refused; --cell keeps the cells named.
func TestCompareResultsFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before, after := results(t, dir, "a", 1), results(t, filepath.Join(dir, "x"), "a", 0.8)
	var out bytes.Buffer
	err := Main([]string{before, after, "--metric", "accepted_per_second"}, &out)
	if exitOf(err) != ExitRegression || !strings.Contains(err.Error(), "accepted_per_second in C4/healthy/cpus-1") ||
		strings.Contains(err.Error(), "C2/healthy") || !strings.Contains(out.String(), "10 runs in 2 cells, results folder") {
		t.Errorf("exit %d, %v\n%s", exitOf(err), err, out.String())
	}
	out.Reset()
	if err := Main([]string{before, after, "--cell", "C2/healthy/cpus-1"}, &out); err != nil {
		t.Errorf("--cell C2: %v\n%s", err, out.String())
	}
	if err := Main([]string{before, after, "--cell", "C3/healthy/cpus-1"}, &out); exitOf(err) != 2 || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("--cell C3: %v", err)
	}
	other := results(t, dir, "b", 1)
	if err := Main([]string{before, other}, &out); exitOf(err) != 2 || !strings.Contains(err.Error(), `different experiments: before`) {
		t.Errorf("different experiments: %v", err)
	}
}

// Flags and paths in any order; a flag's value is not a path.
func TestSplitArgs(t *testing.T) {
	t.Parallel()
	fs, _ := cli.NewFlagSet("compare", "", &bytes.Buffer{})
	var o options
	o.bind(fs)
	flags, paths := splitArgs([]string{"--metric", "a,b", "x", "--json", "y", "--alpha=0.1"}, fs)
	if strings.Join(flags, " ") != "--metric a,b --json --alpha=0.1" || strings.Join(paths, " ") != "x y" {
		t.Errorf("flags %q, paths %q", flags, paths)
	}
}

// Too few runs exit 2 however few: one run against six, one against one,
// and a results folder whose cell has no valid run after.
func TestCompareTooFewRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var six []any
	for i := range 6 {
		six = append(six, runResult(t, 6, 30+float64(i)))
	}
	one := writeJSON(t, dir, "one.json", runResult(t, 6, 15))
	s := writeJSON(t, dir, "six.json", six...)
	before, after := results(t, dir, "a", 1), results(t, filepath.Join(dir, "x"), "a", 1)
	res, err := resultsfile.ReadResults(filepath.Join(after, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Runs {
		if res.Runs[i].Cell.Strategy == "C2" {
			res.Runs[i].Status = resultsfile.RunInvalid
		}
	}
	if err := resultsfile.WriteJSON(filepath.Join(after, "results.json"), res); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"1 v 6", []string{one, s}, "1 run before and 6 after"},
		{"1 v 1", []string{one, one}, "1 run before and 1 after"},
		{"no valid run after", []string{before, after, "--metric", "accepted_per_second"},
			"C2/healthy/cpus-1 accepted_per_second: 5 runs before and 0 after"},
	} {
		var out bytes.Buffer
		err := Main(c.args, &out)
		if exitOf(err) != 2 || !strings.Contains(err.Error(), c.want) || !strings.Contains(out.String(), "NOT JUDGED") {
			t.Errorf("%s: exit %d, %v; want 2 and %q\n%s", c.name, exitOf(err), err, c.want, out.String())
		}
	}
}

// Empty inputs are refused naming the file: both sides empty files, one
// side empty, folders of empty files (and whitespace is empty).
func TestCompareEmptyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var runs []any
	for i := range 5 {
		runs = append(runs, runResult(t, 6, 30+float64(i)))
	}
	r := writeJSON(t, dir, "runs.json", runs...)
	empty := writeJSON(t, dir, "empty.json")
	blank := filepath.Join(dir, "blank.json")
	if err := os.WriteFile(blank, []byte("\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	writeJSON(t, folder, "a.json")
	writeJSON(t, folder, "b.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{empty, empty}, "before: " + empty + ": empty: no result of loadlab run --json or loadlab load --json in it"},
		{[]string{r, empty}, "after: " + empty + ": empty"},
		{[]string{blank, r}, "before: " + blank + ": empty"},
		{[]string{folder, folder}, "before: " + filepath.Join(folder, "a.json") + ": empty"},
	} {
		var out bytes.Buffer
		err := Main(c.args, &out)
		if exitOf(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitOf(err), err, c.want)
		}
	}
}

// The help's examples name metrics of one kind each, as a comparison
// takes them: a run's and a load's together would always exit 2.
func TestHelpExamplesMetrics(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, line := range strings.Split(intro, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "--metric" {
				continue
			}
			var kinds []beforeafter.Kind
			for _, k := range []beforeafter.Kind{beforeafter.Runs, beforeafter.Loads} {
				all := true
				for _, n := range strings.Split(f[i+1], ",") {
					_, ok := beforeafter.Lookup(k, n)
					all = all && ok
				}
				if all {
					kinds = append(kinds, k)
				}
			}
			if len(kinds) == 0 {
				t.Errorf("example %q: --metric %s is of no one kind", strings.TrimSpace(line), f[i+1])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no example with --metric checked")
	}
}

// Beyond the exact limit the output says the test is the normal
// approximation: in the rule and in each row's test; within it, exact.
func TestCompareSaysNormalApproximation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var many, few []any
	for i := range 35 {
		many = append(many, runResult(t, 6, 30+float64(i%7)))
		if i < 5 {
			few = append(few, runResult(t, 6, 30+float64(i%7)))
		}
	}
	m := writeJSON(t, dir, "many.json", many...)
	f := writeJSON(t, dir, "few.json", few...)
	var out bytes.Buffer
	if err := Main([]string{m, m, "--metric", "accepted_per_second"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exact up to 60 values, beyond (1 of the comparisons, marked \"normal\") by the normal approximation " +
		"with a continuity correction", "unpaired, normal"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("35 a side: no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Main([]string{f, f, "--metric", "accepted_per_second"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tests two-sided and exact") || strings.Contains(out.String(), "normal") {
		t.Errorf("5 a side:\n%s", out.String())
	}
}
