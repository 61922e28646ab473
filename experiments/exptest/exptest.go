// Package exptest holds what the experiment packages' tests share: small
// experiment and hypotheses files, writing them, building the loadlab
// binary for child runs, and starting a mock service for an experiment.
package exptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// WriteFile writes content to dir/name and returns its path.
func WriteFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TinySpec is a 2-cell experiment: C2 and C4 under slow writes, 3 runs of
// 30 records at time scale 0.05. Its tests count records, calls and the
// server's draws, which a timeout changes, so its call timeout is 200 lab s
// (10 s real) and its permit timeout 100 lab s (5 s real): the slowest call
// of a healthy run is a few lab seconds, and a child under its one-CPU
// quota, throttled while other tests load both cores under -race, timed out
// enrichment calls at 2 lab s and at 20 (1 s real), and permit waits at 10
// (0.5 s real).
const TinySpec = `name: tiny
records: 30
runs: 3
time_scale: 0.05
call_timeout: 200s
permit_timeout: 100s
seed: 1
strategies: [C2, C4]
scenarios: [slow-write]
cpus:
  - {name: cpus-1, cpus: 1}
`

// TinyHypotheses are two claims on TinySpec's C4 cell.
const TinyHypotheses = `hypotheses:
  - id: T1
    claim: C4 gets no write 503s under slow writes.
    source: test
    metric: write_rejections
    cell: {strategy: C4, scenario: slow-write, cpu: cpus-1}
    op: "=="
    threshold: 0
  - id: T2
    claim: C4 offers at most 6 concurrent writes.
    source: test
    metric: peak_concurrent_writes
    cell: {strategy: C4, scenario: slow-write, cpu: cpus-1}
    op: "<="
    threshold: 6
`

// TinyRateHypotheses are TinyHypotheses and a claim on rates, which the
// time-scale calibration gates: C4's accepted records per lab second are
// at least a hundredth of C2's under slow writes.
const TinyRateHypotheses = TinyHypotheses + `  - id: T3
    claim: C4 accepts at least a hundredth of C2's records per second under slow writes.
    source: test
    metric: accepted_per_second
    cell: {strategy: C4, scenario: slow-write, cpu: cpus-1}
    versus: {strategy: C2, scenario: slow-write, cpu: cpus-1}
    compare: ratio
    op: ">="
    threshold: 0.01
`

// AdvisedSpec is an experiment with the strategy "advised" and its probes.
const AdvisedSpec = `name: advised
records: 30
runs: 3
time_scale: 0.2
call_timeout: 2s
permit_timeout: 10s
seed: 1
strategies: [C4, advised]
scenarios: [slow-write]
cpus:
  - {name: cpus-1, cpus: 1}
advise:
  target_rate: 0
  step: 1s
  warm_up: 250ms
  probes:
    enrichment:
      concurrency: [1, 4, 16]
      body: '{"record_id":"{{.ID}}","step":1}'
    records:
      concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
      body: '{"id":"{{.ID}}","complete":true}'
`

// PhasedSpec is an experiment with one phased scenario: the system of
// record drops to 2 workers and 2 queue slots for 2 of 6 lab seconds.
const PhasedSpec = `name: phased
records: 100000
duration: 6s
runs: 3
time_scale: 0.5
call_timeout: 2s
permit_timeout: 10s
seed: 1
strategies: [C4]
scenarios: [drop]
cpus:
  - {name: cpus-1, cpus: 1}
phased:
  drop:
    profile: healthy
    phases:
      - {name: before, duration: 2s}
      - name: drop
        duration: 2s
        set: {records: {workers: 2, queue: 2}}
      - name: after
        duration: 2s
        set: {records: {workers: 6, queue: 6}}
`

// BuildLoadlab is the real loadlab binary for the child runs: the one
// make test built for every package ($LOADLAB_BIN), else one built once
// for this test binary (removed by Main). Under -short the test is skipped.
func BuildLoadlab(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the loadlab command as a child process; make test runs it (-short skips children)")
	}
	if bin := os.Getenv("LOADLAB_BIN"); bin != "" {
		return bin
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "loadlab-test-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "loadlab")
		out, err := exec.Command("go", "build", "-o", built.bin, "github.com/loadlab/loadlab/cmd/loadlab").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// built is the one loadlab binary a test binary builds, when make test
// does not give one (LOADLAB_BIN).
var built struct {
	once sync.Once
	bin  string
	err  error
}

// Main runs a package's tests (call it from TestMain) and then removes the
// loadlab binary BuildLoadlab built for them, if it built one.
func Main(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// StartMock runs the real mock service on loopback for an experiment of
// seed and time scale, as loadlab experiment does, until the test ends.
func StartMock(t *testing.T, seed uint32, timeScale float64) (string, *config.Config) {
	t.Helper()
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = seed, timeScale
	return mocktest.Start(t, mocktest.Options{Config: cfg}).URL, &cfg
}

// Chromium finds a headless browser (Debian's chromium; .ci/run installs
// it): without one the test is skipped on a developer's machine and fails
// under CI.
func Chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser; make test runs it")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium: .ci/run installs Debian's chromium")
	}
	t.Skip("no chromium on this machine")
	return ""
}

// Artifacts is the folder where tests leave what a person may want to
// see (screenshots): $LOADLAB_ARTIFACTS, else loadlab-artifacts in the
// system's temporary folder.
func Artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LOADLAB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "loadlab-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
