package experiments

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/mockservice/config"
)

// buildLoadlab builds the real loadlab binary for the child runs.
func buildLoadlab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loadlab")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/loadlab/loadlab/cmd/loadlab")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startMock runs the real mock service on loopback for an experiment, as
// loadlab experiment does, until the test ends.
func startMock(t *testing.T, spec Spec) (string, *config.Config) {
	t.Helper()
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	return mocktest.Start(t, cfg).URL, &cfg
}

// A tiny matrix end to end: 2 strategies × 1 scenario × 2 runs, 30 records,
// time scale 0.05, each run a CPU-limited child process of the real binary
// against an in-process mock service.
func TestTinyMatrixEndToEnd(t *testing.T) {
	bin := buildLoadlab(t)
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hpath := writeFile(t, dir, "h.yaml", tinyHypotheses)
	hs, err := LoadHypotheses(hpath, spec)
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	url, mockCfg := startMock(t, spec)
	r := &Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: mockCfg, Progress: func(p Progress) {
		if p.Last != nil {
			progress++
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 || progress != 4 {
		t.Fatalf("%d runs, %d progress reports; want 4", len(res.Runs), progress)
	}
	for _, run := range res.Runs {
		if run.Failed != "" {
			t.Fatalf("%s run %d failed: %s", run.Cell, run.Run, run.Failed)
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
	if len(res.Cells) != 2 || res.Cells[0].Stats["accepted_per_second"].N != 2 {
		t.Errorf("cells %+v", res.Cells)
	}
	for _, v := range res.Verdicts {
		if v.Verdict != Supported {
			t.Errorf("%s: %s %+v", v.ID, v.Verdict, v.Cells)
		}
	}
	out := filepath.Join(dir, "out")
	if err := WriteOutputs(out, res); err != nil {
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
	back, err := ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	again := Judge(back.Hypotheses, back.Runs)
	for i := range again {
		if again[i].Verdict != res.Verdicts[i].Verdict {
			t.Errorf("re-judged %s: %s, stored %s", again[i].ID, again[i].Verdict, res.Verdicts[i].Verdict)
		}
	}
}

// A client that cannot run marks its cell failed with the reason; the
// matrix goes on.
func TestFailedRunIsRecorded(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", strings.Replace(tinySpec, "runs: 2", "runs: 1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	url, _ := startMock(t, spec)
	r := &Runner{Spec: spec, Binary: filepath.Join(dir, "no-such-binary"), Target: url}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].Failed == "" || res.Cells[0].Failed != 1 {
		t.Errorf("runs %+v", res.Runs)
	}
}

// A client run that hangs is killed at its wall-clock limit, and the run
// fails saying so; the matrix goes on.
func TestHungRunIsKilledAtItsLimit(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", strings.Replace(tinySpec, "runs: 2", "runs: 1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	hang := writeFile(t, dir, "hang.sh", "#!/bin/sh\nexec sleep 30\n")
	if err := os.Chmod(hang, 0o755); err != nil {
		t.Fatal(err)
	}
	url, _ := startMock(t, spec)
	r := &Runner{Spec: spec, Binary: hang, Target: url, RunLimit: 300 * time.Millisecond}
	start := time.Now()
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("two hung runs took %v", el)
	}
	for _, run := range res.Runs {
		if !strings.Contains(run.Failed, "wall-clock limit") {
			t.Errorf("%s: failed %q, want the wall-clock limit", run.Cell, run.Failed)
		}
	}
}
