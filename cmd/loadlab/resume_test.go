package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runlog"
)

// ranToTheEnd says whether an experiment ran its matrix to the end and
// wrote its results: exit 0, or 1 for runs that were not valid alone (a
// run the loaded machine failed is still a unit of the matrix, logged and
// kept like any other).
func ranToTheEnd(code int, stderr string) bool {
	if code == 1 {
		return strings.Contains(stderr, "runs were not valid") && !strings.Contains(stderr, "provisional")
	}
	return code == 0
}

// logLines is how many lines dir's run log holds (0 when it has none).
func logLines(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, runlog.Name))
	return strings.Count(string(b), "\n")
}

// wholeResults reads dir's results and checks that they hold every unit
// of the matrix once, in order, each with its seed, and not partial.
func wholeResults(t *testing.T, dir string) *resultsfile.Results {
	t.Helper()
	res, err := resultsfile.ReadResults(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []plan.Unit
	for _, r := range res.Runs {
		got = append(got, plan.Unit{Cell: r.Cell, Run: r.Run})
		if r.Seed != plan.RunSeed(res.Experiment, r.Run) {
			t.Errorf("%s run %d: seed %d, want %d", r.Cell, r.Run, r.Seed, plan.RunSeed(res.Experiment, r.Run))
		}
	}
	if want := plan.Units(res.Experiment); !slices.Equal(got, want) || res.Partial != "" {
		t.Errorf("%s: runs %v (partial %q); want every unit once, in order: %v", dir, got, res.Partial, want)
	}
	return res
}

// The real loadlab experiment, killed with SIGKILL after some runs of a
// small matrix, leaves its run log: check says what is missing and how to
// finish it; resumed, it runs the rest, and its results hold every unit
// once with its seed, the cells and hypotheses judged of an uninterrupted
// run of the same matrix, and say which attempt measured how many runs.
func TestKilledExperimentResumes(t *testing.T) {
	t.Parallel() // child processes: the test counts runs, not their speed
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 4)
	out := filepath.Join(dir, "killed")
	logged := killAfterThreeRuns(t, out, 8, "experiment", "--file", spec, "--hypotheses", hyp, "--out", out)
	code, stdout, stderr := loadlabChild(t, "check", out)
	if code != exitUsage || !strings.Contains(stderr, "finish it with: loadlab experiment --resume "+out) ||
		!strings.Contains(stderr, "runs measured; missing: ") {
		t.Fatalf("check of the killed run's folder: exit %d, %q %q", code, stdout, stderr)
	}
	code, _, stderr = loadlabChild(t, "experiment", "--resume", out)
	if !ranToTheEnd(code, stderr) || !strings.Contains(stderr, "loadlab experiment: resuming "+filepath.Join(out, runlog.Name)) {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	resumed := wholeResults(t, out)
	if a := resumed.Attempts; len(a) != 2 || a[0].Runs < logged || a[0].Runs+a[1].Runs != 8 {
		t.Errorf("attempts %+v; want the %d logged runs, then the rest", a, logged)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "Resumed with loadlab experiment --resume, in 2 attempts: attempt 1 began ") {
		t.Errorf("report.md does not say it was resumed")
	}
	whole := filepath.Join(dir, "whole")
	if code, _, stderr := loadlabChild(t, "experiment", "--file", spec, "--hypotheses", hyp, "--out", whole); !ranToTheEnd(code, stderr) {
		t.Fatalf("uninterrupted: exit %d: %s", code, stderr)
	}
	uninterrupted := wholeResults(t, whole)
	cells := func(r *resultsfile.Results) (out []string) {
		for _, c := range r.Cells {
			out = append(out, c.Cell.String())
		}
		return out
	}
	verdicts := func(r *resultsfile.Results) (out []string) {
		for _, v := range r.Verdicts {
			out = append(out, v.ID)
		}
		return out
	}
	if !slices.Equal(cells(resumed), cells(uninterrupted)) || !slices.Equal(verdicts(resumed), verdicts(uninterrupted)) {
		t.Errorf("resumed: cells %v, verdicts %v; uninterrupted: %v, %v", cells(resumed), verdicts(resumed), cells(uninterrupted), verdicts(uninterrupted))
	}
}

// killAfterThreeRuns starts loadlab with args, an experiment of runs runs
// into out, kills it with SIGKILL once 3 runs are logged, and returns how
// many were.
func killAfterThreeRuns(t *testing.T, out string, runs int, args ...string) int {
	t.Helper()
	cmd, _, errb := startChild(t, args...)
	deadline := time.Now().Add(60 * time.Second)
	for logLines(out) < 4 { // the experiment and 3 runs
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no 3 runs logged within 60 s: %s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// A kill cannot print: the first line said beforehand how to finish.
	if first, _, _ := strings.Cut(errb.String(), "\n"); !strings.HasPrefix(first, "loadlab experiment: results go to "+out) ||
		!strings.Contains(first, "finish it with: loadlab experiment --resume "+out) {
		t.Errorf("the killed experiment's first line does not say how to finish it: %q", first)
	}
	logged := logLines(out) - 1
	if logged >= runs {
		t.Fatalf("all %d runs were logged before the kill: nothing to resume", logged)
	}
	return logged
}

// An orchestrator restarts a killed task with its arguments: with
// --continue the same command resumes the run its --out holds (and
// starts one where it holds none); given other settings, or finished,
// it refuses with exit 2, as it does without --out or beside --resume.
func TestContinueResumesARestartedTask(t *testing.T) {
	// Not parallel: its three experiments' CPU would crowd the package's
	// parallel tests that drive a browser.
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 4)
	out := filepath.Join(dir, "task")
	args := []string{"experiment", "--file", spec, "--hypotheses", hyp, "--shard", "0/1", "--out", out, "--continue", "--json-lines"}
	logged := killAfterThreeRuns(t, out, 8, args...)
	code, stdout, stderr := loadlabChild(t, args...)
	if code != 0 || !strings.Contains(stderr, "loadlab experiment: resuming "+filepath.Join(out, runlog.Name)) {
		t.Fatalf("restarted with --continue: exit %d: %s", code, stderr)
	}
	res, err := resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Attempts; len(res.Runs) != 8 || len(a) != 2 || a[0].Runs < logged || a[0].Runs+a[1].Runs != 8 {
		t.Errorf("%d runs, attempts %+v; want 8: the %d logged, then the rest", len(res.Runs), a, logged)
	}
	if !strings.Contains(stdout, `{"kind":"results"`) {
		t.Errorf("the restarted task printed no results line")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(args), "--runs", "2"), "begun with other files or settings than these"},
		{args, "holds the results of a finished experiment: nothing to resume"},
		{[]string{"experiment", "--file", spec, "--hypotheses", hyp, "--continue"}, "--continue needs --out"},
		{[]string{"experiment", "--resume", out, "--continue"}, "--resume cannot be given with it"},
	} {
		code, _, stderr := loadlabChild(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args[1:], code, stderr, c.want)
		}
	}
}

// An output device that fills stops the matrix at once (exit 1, the
// command that finishes it printed) and loses nothing logged: once there
// is room, the resumed experiment keeps every logged run as it was and
// runs the rest. The device is a 24 KiB tmpfs (mounting it needs root).
func TestFullDeviceLosesNothingLogged(t *testing.T) {
	t.Parallel() // child processes: the test counts runs, not their speed
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 6)
	small := filepath.Join(dir, "small")
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", small).CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (root needed): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", small).Run() })
	out := filepath.Join(small, "out")
	code, _, stderr := loadlabChild(t, "experiment", "--file", spec, "--hypotheses", hyp, "--out", out)
	if code != exitFailed || !strings.Contains(stderr, "the run log could not be written") || !strings.Contains(stderr, "no space left on device") ||
		!strings.Contains(stderr, "finish it with: loadlab experiment --resume "+out) {
		t.Fatalf("a full device: exit %d: %s", code, stderr)
	}
	l, err := runlog.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[plan.Unit]string{}
	for u, r := range l.Resume.Runs {
		b, _ := json.Marshal(r)
		logged[u] = string(b)
	}
	if len(logged) == 0 || len(logged) >= 12 {
		t.Fatalf("%d runs logged before the device filled; want some and not all", len(logged))
	}
	if b, err := exec.Command("mount", "-o", "remount,size=8m", small).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, b)
	}
	if code, _, stderr := loadlabChild(t, "experiment", "--resume", out); !ranToTheEnd(code, stderr) {
		t.Fatalf("resumed with room: exit %d: %s", code, stderr)
	}
	res := wholeResults(t, out)
	kept := 0
	for _, r := range res.Runs {
		b, _ := json.Marshal(r)
		if was, ok := logged[plan.Unit{Cell: r.Cell, Run: r.Run}]; ok && was == string(b) {
			kept++
		}
	}
	if kept != len(logged) {
		t.Errorf("%d of the %d runs logged before the device filled are in the results as they were logged", kept, len(logged))
	}
	t.Logf("%d runs logged before the device filled (%s); the resume ran the other %d", len(logged), l.Torn, 12-len(logged))
}
