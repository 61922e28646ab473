package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// The test binary doubles as the command when LOADLAB_RUN_MAIN is set: the
// signal tests run the real main in a child, and the experiment's own
// child runs are this binary too.
func TestMain(m *testing.M) {
	if os.Getenv("LOADLAB_RUN_MAIN") == "1" {
		cpulimit.Enter()
		enterRunProcess()
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	exptest.Main(m)
}

// silentTarget accepts connections and never answers.
func silentTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// A target that accepts connections and never answers makes run, load and
// experiment exit 2 within 10 seconds with one line saying so.
func TestSilentTargetExitsTwoWithinTenSeconds(t *testing.T) {
	t.Parallel() // it waits, idle, beside the other tests
	url := silentTarget(t)
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 3)
	for _, args := range [][]string{
		{"run", "--target", url},
		{"load", "--target", url + "/enrich"},
		{"experiment", "--file", spec, "--hypotheses", hyp, "--target", url, "--out", filepath.Join(dir, "out")},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel() // each waits out the same 5 s bound
			var out, errb bytes.Buffer
			start := time.Now()
			code := run(args, &out, &errb)
			el := time.Since(start)
			msg := strings.TrimSpace(errb.String())
			if code != exitUsage || el > 10*time.Second || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "did not answer") {
				t.Errorf("exit %d after %v, stderr %q; want 2 within 10 s, one line", code, el.Round(time.Millisecond), msg)
			}
		})
	}
}

// lockedTinyExperiment writes a two-cell experiment of n runs and its
// hypotheses, locked. Its call timeout is 200 lab s (10 s real) and its
// permit timeout 100 lab s: at the lab's 2 s (100 ms real at time scale
// 0.05), C2's 32 records in flight under -race, beside another
// experiment's children on two cores, timed out calls now and then, as
// the tiny experiments' 20 lab s (1 s real) did, and at 1 lab s C4's
// records waited past it for a permit: the runs failed for the machine's
// sake.
func lockedTinyExperiment(t *testing.T, dir string, runs int) (spec, hyp string) {
	t.Helper()
	return lockedTinyExperimentWith(t, dir, runs, "")
}

// lockedTinyExperimentWith is lockedTinyExperiment with more hypotheses
// (YAML list items) after its one.
func lockedTinyExperimentWith(t *testing.T, dir string, runs int, more string) (spec, hyp string) {
	t.Helper()
	spec, hyp = filepath.Join(dir, "spec.yaml"), filepath.Join(dir, "h.yaml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(spec, "name: t\nrecords: 20\nruns: "+string(rune('0'+runs))+"\ntime_scale: 0.05\ncall_timeout: 200s\npermit_timeout: 100s\nstrategies: [C2, C4]\nscenarios: [healthy]\ncpus:\n  - {name: inherit, inherit: true}\n")
	write(hyp, "hypotheses:\n  - id: A\n    claim: c\n    source: s\n    metric: write_rejections\n    cell: {strategy: C4, scenario: healthy, cpu: inherit}\n    op: \"==\"\n    threshold: 0\n"+more)
	sp, err := design.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := design.Preregister(hyp, sp, time.Now()); err != nil {
		t.Fatal(err)
	}
	return spec, hyp
}

// interruptChild starts this binary as loadlab with args, and interrupts
// it with SIGINT once its stderr holds ready (any output at all when ready
// is empty) and delay has passed.
func interruptChild(t *testing.T, ready string, delay time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return interruptChildWhen(t, func(stderr string) bool { return strings.Contains(stderr, ready) }, delay, args...)
}

// interruptChildWhen is interruptChild with its own readiness test, given
// the child's stderr so far.
func interruptChildWhen(t *testing.T, ready func(stderr string) bool, delay time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd, out, errb := startChild(t, args...)
	deadline := time.Now().Add(30 * time.Second)
	for !ready(errb.String()) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("%v: not ready to interrupt within 30 s: %s", args, errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%v did not end within 30 s of SIGINT", args)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// startChild starts this binary as loadlab with args, its stdout and
// stderr kept (stderr readable while it runs).
func startChild(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *lockedBuffer) {
	t.Helper()
	skipChildren(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOADLAB_RUN_MAIN=1")
	out, errb := &bytes.Buffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that fails before it stops its child (one kept by --ui-keep
	// waits for Ctrl-C) must not leave it running.
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, out, errb
}

// lockedBuffer is a buffer a child writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Interrupted, run and load print what they measured, marked partial, and
// exit 130.
func TestInterruptedRunAndLoadArePartial(t *testing.T) {
	t.Parallel() // a child process that is interrupted whatever else runs
	cfg := config.Default()
	cfg.TimeScale = 0.1
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	// SIGINT once the server has stored 5 writes: a fixed delay found no
	// record complete when a loaded -race suite slowed the child's start.
	stored := func(string) bool { return m.Service.Stats().StoredWrites >= 5 }
	code, out, errb := interruptChildWhen(t, stored, 100*time.Millisecond, "run", "--target", m.URL, "--time-scale", "0.1", "--records", "20000", "--json")
	if code != exitInterrupted || !strings.Contains(errb, "loadlab: stopping: no new work") ||
		!strings.Contains(errb, "; what was measured is printed, marked partial") {
		t.Errorf("run: exit %d, stderr %q; want 130, saying it drains and prints a partial result", code, errb)
	}
	checkDrained(t, out, m.Service.Stats().StoredWrites)
	// SIGINT 700 ms after the child is listening for it (the dashboard's
	// address is printed after): sent a fixed time after the start, it once
	// found a child slowed by a loaded -race suite still starting, and
	// killed it.
	code, out, errb = interruptChild(t, "loadlab: dashboard at", 700*time.Millisecond, "load", "--time-scale", "0.05", "--json", "--ui", "127.0.0.1:0")
	var lres struct {
		Partial  bool `json:"partial"`
		Requests int  `json:"requests"`
	}
	if err := json.Unmarshal([]byte(out), &lres); err != nil || code != exitInterrupted || !lres.Partial || lres.Requests == 0 || lres.Requests >= 300 {
		t.Errorf("load: exit %d, %+v (%v), stderr %q; want 130 and a partial result", code, lres, err, errb)
	}
}

// checkDrained checks the result of a run whose first SIGINT came once the
// server had stored 5 writes, the server holding stored now: the drain
// interrupts nothing (the context is never cancelled); every record is in
// exactly one state, those not begun not_started; the 5 writes came from
// records begun before it, each answered 201 or of unknown outcome; and
// every write the server holds is one of those, each unknown one listed
// and a write call that ended unanswered. A record in flight keeps its
// call timeouts (2 lab s, 200 ms here), so a write of unknown outcome is
// no fault of the drain: on a loaded machine a stalled client times out a
// call whose answer was on its way, as it would had there been no
// interrupt. That a drain leaves none when no call times out is
// records.TestStopDrains's, on a fake clock.
func checkDrained(t *testing.T, out string, stored int) {
	t.Helper()
	var r records.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("run: %v: %s", err, out)
	}
	writes := r.Calls[records.Records]
	states := r.Complete + r.Incomplete + r.WriteRejected + r.StepRejected + r.Failed + r.WriteUnknown + r.Interrupted + r.NotStarted
	if !r.Partial || r.Interrupted != 0 || r.Records != 20000 || states != r.Records || r.NotStarted == 0 || r.WritesCreated+r.WriteUnknown < 5 {
		t.Errorf("run: partial %v, %d records in %d states: %d complete, %d incomplete, %d write_rejected, %d step_rejected, %d failed, "+
			"%d write_unknown, %d interrupted, %d not_started; %d answered 201; want partial, 20000 in as many states, none interrupted, "+
			"some not started, 5 writes or more answered 201 or unanswered", r.Partial, r.Records, states, r.Complete, r.Incomplete,
			r.WriteRejected, r.StepRejected, r.Failed, r.WriteUnknown, r.Interrupted, r.NotStarted, r.WritesCreated)
	}
	if len(r.UnknownWrites) != r.WriteUnknown || r.WriteUnknown > writes[budgets.CallTimeout]+writes[budgets.Error] {
		t.Errorf("run: %d writes of unknown outcome, %d listed, of %v write calls", r.WriteUnknown, len(r.UnknownWrites), writes)
	}
	if stored < r.WritesCreated || stored > r.WritesCreated+r.WriteUnknown {
		t.Errorf("the server holds %d writes; the client saw %d answered 201 and %d unanswered", stored, r.WritesCreated, r.WriteUnknown)
	}
}

// An interrupted experiment writes its results over the runs that
// completed, marked partial in every output, and exits 130.
func TestInterruptedExperimentIsPartial(t *testing.T) {
	t.Parallel() // a child process that is interrupted whatever else runs
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 4)
	outDir := filepath.Join(dir, "out")
	// SIGINT once the first of 8 runs has finished.
	code, _, errb := interruptChild(t, "1/8 ", 0, "experiment", "--file", spec, "--hypotheses", hyp, "--out", outDir)
	if code != exitInterrupted || !strings.Contains(errb, "partial results written to "+outDir+"; finish it with: ") {
		t.Fatalf("exit %d, stderr %q; want 130, saying where the results are", code, errb)
	}
	res, err := resultsfile.ReadResults(filepath.Join(outDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Partial, "interrupted after ") || len(res.Runs) == 0 || len(res.Runs) >= 8 || len(res.Cells) != 2 || res.Finished.IsZero() {
		t.Errorf("partial %q, %d runs, %d cells, finished %v", res.Partial, len(res.Runs), len(res.Cells), res.Finished)
	}
	for _, f := range []string{"report.md", "report.html"} {
		b, _ := os.ReadFile(filepath.Join(outDir, f))
		if !strings.Contains(string(b), "PARTIAL: interrupted after") {
			t.Errorf("%s does not say it is partial", f)
		}
	}
	resumeAfterInterrupt(t, outDir, spec, errb)
}

// resumeAfterInterrupt resumes the interrupted experiment of outDir, read
// from spec: the interruption printed the command; check says the log
// holds the rest; resuming refuses other flags and an edited experiment
// file, running nothing; with the file as it was, it finishes the matrix.
func resumeAfterInterrupt(t *testing.T, outDir, spec, errb string) {
	t.Helper()
	if !strings.Contains(errb, "; finish it with: loadlab experiment --resume "+outDir) {
		t.Errorf("the interruption does not say how to finish: %s", errb)
	}
	if code, stdout, _ := loadlabChild(t, "check", outDir); code != 0 || !strings.Contains(stdout, "finish it with: loadlab experiment --resume "+outDir) {
		t.Errorf("check of the partial results: exit %d, %s", code, stdout)
	}
	if code, _, stderr := loadlabChild(t, "experiment", "--resume", outDir, "--runs", "3"); code != exitUsage ||
		!strings.Contains(stderr, "--resume takes the experiment's files and settings from its run log: --runs cannot be given with it") {
		t.Errorf("--resume with --runs: exit %d, %s", code, stderr)
	}
	original, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	lines := logLines(outDir)
	if err := os.WriteFile(spec, append(original, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := loadlabChild(t, "experiment", "--resume", outDir); code != exitUsage ||
		!strings.Contains(stderr, "not the experiment the run log holds: the experiment file (SHA-256) differs") || logLines(outDir) != lines {
		t.Errorf("resumed against an edited experiment file: exit %d, %d log lines (was %d): %s", code, logLines(outDir), lines, stderr)
	}
	if err := os.WriteFile(spec, original, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := loadlabChild(t, "experiment", "--resume", outDir); !ranToTheEnd(code, stderr) {
		t.Fatalf("resumed: exit %d: %s", code, stderr)
	}
	if res := wholeResults(t, outDir); len(res.Attempts) != 2 {
		t.Errorf("attempts %+v; want 2", res.Attempts)
	}
}

// Requests or records that failed make the command exit 1.
func TestFailuresExitOne(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"load", "--target", srv.URL + "/x", "--time-scale", "0.02", "--duration", "3"}, &out, &errb); code != exitFailed || !strings.Contains(errb.String(), "405") {
		t.Errorf("load against 405s: exit %d, stderr %q; want 1 naming the status", code, errb.String())
	}
	url := startMock(t, 1)
	errb.Reset()
	// Writes of 150 ms against a 10 ms call timeout, at time scale 1: no
	// record completes, however late a starved machine fires the timer;
	// each one's write is of unknown outcome, or the record failed before
	// it (a lookup that a stall of the host timed out too).
	code := run([]string{"run", "--target", url, "--time-scale", "1", "--records", "10", "--call-timeout", "10ms", "--profile", "slow-write"}, &out, &errb)
	var failed, unknown int
	_, err := fmt.Sscanf(errb.String(), "loadlab: run: %d records failed, %d writes of unknown outcome", &failed, &unknown)
	if code != exitFailed || err != nil || failed+unknown != 10 {
		t.Errorf("run with every write timed out: exit %d, stderr %q; want 1, and 10 records failed or of unknown write (%v)", code, errb.String(), err)
	}
}

// A second SIGINT aborts a drain: the calls in flight (writes that take 3 s
// here) are cancelled, their records end interrupted or of unknown write,
// and the run exits 130 at once with what it measured.
func TestSecondInterruptAborts(t *testing.T) {
	t.Parallel() // a child process that is interrupted whatever else runs
	cfg := config.Default()
	cfg.TimeScale = 0.1
	p := cfg.Profiles[config.ProfileHealthy]
	p.Records = latency.Spec{Kind: "fixed", Value: 30 * time.Second}
	cfg.Profiles[config.ProfileHealthy] = p
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	cmd, out, errb := startChild(t, "run", "--target", m.URL, "--time-scale", "0.1", "--records", "50", "--call-timeout", "60s", "--json")
	deadline := time.Now().Add(30 * time.Second)
	for m.Service.Stats().Stations["records"].Busy == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	for !strings.Contains(errb.String(), "stopping") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	second := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var res struct {
		Partial      bool `json:"partial"`
		Interrupted  int  `json:"interrupted"`
		WriteUnknown int  `json:"write_unknown"`
	}
	jerr := json.Unmarshal(out.Bytes(), &res)
	if took := time.Since(second); cmd.ProcessState.ExitCode() != exitInterrupted || jerr != nil || !res.Partial ||
		res.Interrupted+res.WriteUnknown == 0 || took > 2*time.Second {
		t.Errorf("exit %d (%v) %.1f s after the second SIGINT, %+v (%v), stderr %q; want 130 at once and the calls in flight cut",
			cmd.ProcessState.ExitCode(), err, took.Seconds(), res, jerr, errb.String())
	}
}
