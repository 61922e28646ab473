package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// begun is the results of a 2-cell, 2-run experiment before any run.
func begun(t *testing.T) *resultsfile.Results {
	t.Helper()
	spec := design.Spec{Name: "t", Runs: 2, Records: 10, TimeScale: 0.1, Seed: 7,
		Strategies: []string{"C2", "C4"}, Scenarios: []string{"healthy"}, CPUs: []design.CPUSetting{{Name: "inherit", Inherit: true}}}
	return &resultsfile.Results{Experiment: spec, Started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), ExperimentSHA256: "e"}
}

// unit is the n-th unit of the experiment begun gives.
func unit(t *testing.T, n int) plan.Unit {
	t.Helper()
	return plan.Units(begun(t).Experiment)[n]
}

func runOf(u plan.Unit) resultsfile.RunRecord {
	return resultsfile.RunRecord{Cell: u.Cell, Run: u.Run, Seed: uint32(7 + u.Run), Status: resultsfile.RunValid}
}

// writeLog begins a log in dir and logs the first n units' runs.
func writeLog(t *testing.T, dir string, n int) *Writer {
	t.Helper()
	w := Create(dir, Invocation{File: "/x/spec.yaml", Overrides: design.Overrides{Runs: 2}})
	if err := w.Begin(begun(t)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Run(runOf(unit(t, i))); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// A log cut in the middle of its last line (a process killed while
// writing it) reads up to that line, says so, and is resumed after its
// last whole line: the torn bytes go, the attempt line follows.
func TestTornLastLineIsIgnored(t *testing.T) {
	dir := t.TempDir()
	w := writeLog(t, dir, 2)
	w.Close()
	path := filepath.Join(dir, Name)
	whole, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"run","run":{"cell":`)
	f.Close()
	l, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Resume.Runs) != 2 || !strings.Contains(l.Torn, "line 4 (") || l.Invocation.File != "/x/spec.yaml" || l.Invocation.Overrides.Runs != 2 {
		t.Fatalf("%d runs, torn %q, invocation %+v", len(l.Resume.Runs), l.Torn, l.Invocation)
	}
	if m := l.Missing(); len(m) != 2 || m[0] != unit(t, 2) || !strings.Contains(l.Describe(), "2 of 4 runs measured; missing: C2/healthy/inherit run 2, C4/healthy/inherit run 2") {
		t.Errorf("missing %v; %s", m, l.Describe())
	}
	a := Append(l)
	if err := a.Begin(begun(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.Run(runOf(unit(t, 2))); err != nil {
		t.Fatal(err)
	}
	a.Close()
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(whole)) || !strings.Contains(string(after[len(whole):]), `{"kind":"attempt"`) {
		t.Fatalf("the resumed log does not go on after the last whole line:\n%s", after[len(whole):])
	}
	l, err = Read(dir)
	if err != nil || l.Torn != "" || len(l.Resume.Attempts) != 2 || l.Resume.Attempt[unit(t, 2)] != 1 || l.Resume.Attempt[unit(t, 0)] != 0 {
		t.Errorf("after the resume: %v, torn %q, %d attempts, %v", err, l.Torn, len(l.Resume.Attempts), l.Resume.Attempt)
	}
}

// A line that cannot be read before the last is an error naming it, and
// so is a log that does not begin an experiment.
func TestBrokenLogsAreErrors(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, 1).Close()
	path := filepath.Join(dir, Name)
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(path, []byte(lines[0]+"not json\n"+lines[1]), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "line 2 is not a line of a run log") {
		t.Errorf("a broken middle line: %v", err)
	}
	os.WriteFile(path, []byte(lines[1]), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "line 1: a run log begins with its experiment") {
		t.Errorf("no first line: %v", err)
	}
	if _, err := Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no run log (run-log.jsonl)") {
		t.Errorf("no log: %v", err)
	}
}

// A calibration pair's run logged again (its twin was lost) replaces the
// first, and the twin logged before it is not its twin.
func TestARunAgainIsWithoutItsEarlierTwin(t *testing.T) {
	dir := t.TempDir()
	w := writeLog(t, dir, 1)
	u := unit(t, 0)
	twin := runOf(u)
	twin.Seed = 99
	again := runOf(u)
	again.Reason = "again"
	for _, err := range []error{w.Twin(twin), w.Run(again)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	l, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Resume.Twins[u]; ok || l.Resume.Runs[u].Reason != "again" {
		t.Errorf("twins %v, run %+v", l.Resume.Twins, l.Resume.Runs[u])
	}
}

// Once a line could not be written, nothing more is: a line after a torn
// one would be lost to the reader.
func TestAFailedWriteStopsTheLog(t *testing.T) {
	dir := t.TempDir()
	w := writeLog(t, dir, 1)
	w.f.Close() // the next write fails
	if err := w.Run(runOf(unit(t, 1))); err == nil {
		t.Fatal("a write to a closed log succeeded")
	}
	if err := w.Run(runOf(unit(t, 2))); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Errorf("a write after a failed one: %v", err)
	}
	if l, err := Read(dir); err != nil || len(l.Resume.Runs) != 1 {
		t.Errorf("what was logged before: %v", err)
	}
}
