package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// dashboardURL waits for a child's stderr to say where its dashboard is.
func dashboardURL(t *testing.T, cmd *exec.Cmd, errb *lockedBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`loadlab: dashboard at (http://\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no dashboard within 30 s: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// browser is a headless chromium at 1,366 × 768.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exptest.Chromium(t)), chromedp.WindowSize(1366, 768),
		chromedp.NoSandbox, chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// screenshot saves the browser's window as name in the test artifacts.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(exptest.Artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// stopKept ends a child that keeps its dashboard (--ui-keep) and checks
// that it exits as its work did.
func stopKept(t *testing.T, cmd *exec.Cmd, errb *lockedBuffer, want int) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the command did not stop serving its dashboard within 30 s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Errorf("exit %d, want %d (the work's): %s", code, want, errb.String())
	}
}

// nonZero says whether the state's chart id has a row with a value above
// zero (beyond its x).
const nonZero = `((id) => {
	const c = (window.loadlabState.charts || []).find((c) => c.id === id);
	return !!c && c.rows.some((r) => r.slice(1).some((v) => v > 0)) &&
		!!document.querySelector('[data-chart="' + id + '"] canvas');
})`

// waitDone waits until the page says the work is done; failing, it says
// what the page last showed and what the command printed.
func waitDone(t *testing.T, ctx context.Context, what string, errb *lockedBuffer, limit time.Duration) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.body.dataset.status === "done"`, chromedp.WithPollingTimeout(limit)))
	if err == nil {
		return
	}
	shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({url: location.href, status: document.body.dataset.status || null,
		state: window.loadlabState ? {status: loadlabState.status, message: loadlabState.message} : null})`))
	t.Fatalf("%s never said done within %v: %v; the page shows %s; stderr: %s", what, limit, err, shown, errb.String())
}

// A tiny real experiment watched in Debian's chromium: the grid reaches
// its final state (every run valid, none pending or running), the charts
// of accepted rates and calls in flight hold non-zero data and are drawn,
// the verdict table matches results.json, and the page says the work is
// done and links the report, which it serves; the command then exits as
// its work did. A record run's page draws its calls in flight, accepted
// writes and calls by how they ended; a short load's its requests and
// figures.
// Screenshots go to the test artifacts.
func TestDashboardInABrowser(t *testing.T) {
	t.Parallel() // a child process and a browser: the test reads states, not speed
	ctx := browser(t)
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 4)
	out := filepath.Join(dir, "out")
	cmd, _, errb := startChild(t, "experiment", "--file", spec, "--hypotheses", hyp, "--out", out, "--ui", "127.0.0.1:0", "--ui-keep")
	url := dashboardURL(t, cmd, errb)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx, "the page", errb, 2*time.Minute)
	screenshot(t, ctx, "dashboard-experiment.png")
	grid, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#grid td[data-status]")].map((e) => e.dataset.status)`))
	if err != nil || len(grid) != 8 || strings.Count(strings.Join(grid, " "), "valid") != 8 {
		t.Errorf("the grid: %v (%v); want 8 runs, all valid", grid, err)
	}
	for _, id := range []string{"accepted", "inflight"} {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nonZero+`("`+id+`")`)); err != nil || !ok {
			t.Errorf("chart %s: no non-zero data drawn (%v)", id, err)
		}
	}
	res, err := resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range res.Verdicts {
		want = append(want, v.ID+" "+string(v.Verdict))
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#verdicts tr[data-id]")].map((r) => r.dataset.id + " " + r.querySelector("[data-verdict]").dataset.verdict)`))
	if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("verdicts on the page %v (%v), in results.json %v", got, err, want)
	}
	report, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.getElementById("report").href).then((r) => r.text())`,
		chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(report, "<html") {
		t.Errorf("the report link: %v, %.80q", err, report)
	}
	stopKept(t, cmd, errb, 0)

	mock := startMock(t, 0.1)
	// Calls get 20 real s (200 lab s at 0.1), not 200 ms: the page is under
	// test, and a stall beside the browser must not fail the run.
	cmd, _, errb = startChild(t, "run", "--target", mock, "--time-scale", "0.1", "--records", "600", "--strategy", "C4",
		"--profile", "slow-write", "--call-timeout", "200s", "--ui", "127.0.0.1:0", "--ui-keep")
	if err := chromedp.Do(ctx, chromedp.Navigate(dashboardURL(t, cmd, errb))); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx, "the run's page", errb, time.Minute)
	screenshot(t, ctx, "dashboard-run.png")
	for _, id := range []string{"inflight", "accepted", "classes"} {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nonZero+`("`+id+`")`)); err != nil || !ok {
			t.Errorf("the run's chart %s: no non-zero data drawn (%v)", id, err)
		}
	}
	stopKept(t, cmd, errb, 0)

	cmd, _, errb = startChild(t, "load", "--time-scale", "0.05", "--ui", "127.0.0.1:0", "--ui-keep")
	if err := chromedp.Do(ctx, chromedp.Navigate(dashboardURL(t, cmd, errb))); err != nil {
		t.Fatal(err)
	}
	waitDone(t, ctx, "the load's page", errb, time.Minute)
	screenshot(t, ctx, "dashboard-load.png")
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](nonZero+`("sent")`)); err != nil || !ok {
		t.Errorf("the load's requests chart: no non-zero data drawn (%v)", err)
	}
	facts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("facts").textContent`))
	if err != nil || !strings.Contains(facts, "p99_ms ") || !strings.Contains(facts, "requests ") {
		t.Errorf("the load's figures: %q (%v)", facts, err)
	}
	stopKept(t, cmd, errb, 0)
}
