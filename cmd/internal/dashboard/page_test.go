package dashboard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/mockservice/config"
)

// browser is a headless chromium at 1,366 × 768.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exptest.Chromium(t)), chromedp.WindowSize(1366, 768),
		chromedp.NoSandbox, chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// experimentPage serves the tiny experiment locked with lockedRuns runs,
// every run ended but the last cell's run 3, and opens it in ctx once the
// page shows that state.
func experimentPage(t *testing.T, ctx context.Context, lockedRuns int) {
	t.Helper()
	spec, hs, lock := tinyExperiment(t, lockedRuns)
	s := New("experiment", "Experiment tiny")
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	units := plan.Units(spec)
	p := NewExperimentProgress(s, spec, hs, lock, units, config.Default())
	for i, u := range units[:len(units)-1] {
		p.RunDone(runRecord(u, rateOf(u)), i+1, len(units), 0)
	}
	s.dropped.Add(3)
	s.push()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.Poll[chromedp.Void](`window.loadlabState && loadlabState.experiment.done === 5 &&
		!!document.querySelector('[data-chart="accepted"] canvas')`, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatal(err)
	}
}

// eval is what expression evaluates to in the page.
func eval[T any](t *testing.T, ctx context.Context, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("%s: %v", expression, err)
	}
	return v
}

// The page in Debian's chromium: the accepted-rate chart draws a series
// per cell with a break where a cell has no run, each axis is labelled in
// words with its unit and a point's legend says its run, cell, value and
// unit; the claims are whole, wrapped and not cut; the foot says in plain
// words what it counts; an exploratory experiment's page says so at the
// top with the reason, and the preregistered one's does not; the page
// says what a lab second is. A screenshot goes to the test artifacts.
func TestThePageInABrowser(t *testing.T) {
	ctx := browser(t)
	experimentPage(t, ctx, 5)
	cells := eval[[]string](t, ctx, `graphs.accepted.getLabels()`)
	if len(cells) != 3 || cells[1] != "C2/slow-write/cpus-1" || cells[2] != "C4/slow-write/cpus-1" {
		t.Errorf("the accepted chart's series %q, want the run and a series per cell", cells)
	}
	// Row 3 (run 3): C2's point, and a break in C4's series.
	if got := eval[[]any](t, ctx, `[graphs.accepted.getValue(2, 1), graphs.accepted.getValue(2, 2), graphs.accepted.getOption("connectSeparatedPoints")]`); got[0] != 203.0 || got[1] != nil || got[2] != false {
		t.Errorf("run 3's row %v: want C2's 203, no C4 point (null) and no joining across it", got)
	}
	axes := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-chart] .dygraph-xlabel, [data-chart] .dygraph-ylabel')].map((e) => e.textContent)`)
	if strings.Join(axes, "|") != "run of the cell (1 to 3)|accepted records per lab second|lab seconds since the run began|calls in flight" {
		t.Errorf("the axes' labels: %q", axes)
	}
	legend := eval[string](t, ctx, `graphs.accepted.setSelection(1, "C4/slow-write/cpus-1"); document.querySelector('[data-chart="accepted"] .legend').textContent`)
	for _, want := range []string{"run of the cell (1 to 3): 2", "C4/slow-write/cpus-1 42 accepted records per lab second", "C2/slow-write/cpus-1 202 accepted records per lab second"} {
		if !strings.Contains(legend, want) {
			t.Errorf("a point's legend %q does not say %q", legend, want)
		}
	}
	claim := eval[map[string]any](t, ctx, `(() => { const td = document.querySelector('#verdicts tr[data-id="T1"] td.claim'), st = getComputedStyle(td);
		const short = document.querySelector('#verdicts tr[data-id="T2"] td.claim');
		return {text: td.textContent, cut: td.scrollWidth > td.clientWidth || st.textOverflow === "ellipsis" || st.whiteSpace === "nowrap",
			wrapped: td.getBoundingClientRect().height > 2 * short.getBoundingClientRect().height,
			inside: td.getBoundingClientRect().right <= window.innerWidth}; })()`)
	if claim["text"] != longClaim || claim["cut"] != false || claim["wrapped"] != true || claim["inside"] != true {
		t.Errorf("the claim on the page %v, want it whole, wrapped over lines within the window and not cut: %q", claim, longClaim)
	}
	ticks := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-chart="accepted"] .dygraph-axis-label-x')].map((e) => e.textContent)`)
	if strings.Join(ticks, " ") != "1 2 3" {
		t.Errorf("the accepted chart's x axis is marked %q, want the run numbers 1 2 3", ticks)
	}
	foot := eval[string](t, ctx, `document.getElementById("foot").textContent`)
	if !strings.Contains(foot, "updates not shown because the page was behind: 3 (the latest is always shown)") || strings.Contains(foot, "slow browser") {
		t.Errorf("the foot: %q", foot)
	}
	banner := eval[map[string]any](t, ctx, `(() => { const e = document.getElementById("exploratory"), r = e.getBoundingClientRect();
		return {text: e.textContent.replace(/\s+/g, " "), shown: !e.hidden && r.height > 0, top: r.top < document.getElementById("experiment").getBoundingClientRect().top}; })()`)
	if want := "EXPLORATORY, not the preregistered design: runs 3, locked 5: the verdicts are computed, and are not findings."; banner["text"] != want || banner["shown"] != true || banner["top"] != true {
		t.Errorf("the exploratory banner %v, want it shown above the matrix, saying %q", banner, want)
	}
	body := eval[string](t, ctx, `document.body.innerText`)
	for _, want := range []string{"A lab second is a second of the lab's timeline: real seconds ÷ the time scale", "median accepted records per lab second"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if strings.Contains(body, "/lab s") || strings.Contains(body, "…") {
		t.Errorf("the page abbreviates a unit or cuts a text: %q", body)
	}
	screenshot(t, ctx, "dashboard-page.png")

	experimentPage(t, ctx, 3)
	if shown := eval[bool](t, ctx, `!document.getElementById("exploratory").hidden`); shown {
		t.Error("the preregistered design's page says its verdicts are exploratory")
	}
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
