package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/mockservice/config"
)

// startMock serves the mock service at time scale scale on loopback. The
// runs of this package's tests against one at 0.05 give their calls
// --call-timeout 20s (1 real s, not the default's 100 ms): they read
// counts, states and shapes, and a stall of the machine beside them must
// not turn a call into a timeout; a test of timeouts sets its own.
func startMock(t *testing.T, scale float64) string {
	t.Helper()
	cfg := config.Default()
	cfg.TimeScale = scale
	return mocktest.Start(t, mocktest.Options{Config: cfg}).URL
}

func TestRunJSON(t *testing.T) {
	url := startMock(t, 0.05)
	var out, errb bytes.Buffer
	// A call timeout of 10 real seconds (200 lab s at 0.05): the test
	// reads the JSON's shape, and the default's 100 ms, and 1 s, a stall
	// beside other work passed.
	code := run([]string{"run", "--target", url, "--strategy", "C4", "--records", "40", "--time-scale", "0.05",
		"--profile", "slow-write", "--call-timeout", "200s", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"strategy", "records", "complete", "incomplete", "write_rejected", "failed",
		"duration_seconds", "accepted_per_real_second", "accepted_per_lab_second", "write_rejections", "peak_concurrent_writes", "peak_in_flight",
		"gomaxprocs", "num_cpu", "cpu_quota"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	sum := m["complete"].(float64) + m["incomplete"].(float64) + m["write_rejected"].(float64) + m["failed"].(float64)
	if sum != 40 || m["strategy"] != "C4" {
		t.Errorf("states add up to %v for strategy %v", sum, m["strategy"])
	}
	if pcw := m["peak_concurrent_writes"].(float64); pcw < 1 || pcw > 6 {
		t.Errorf("peak_concurrent_writes %v, want 1–6 for C4", pcw)
	}
}

func TestRunBadInput(t *testing.T) {
	url := startMock(t, 0.05)
	dead := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		return "http://" + ln.Addr().String()
	}()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--target", url, "--strategy", "C9"}, "unknown strategy"},
		{[]string{"run", "--target", url, "--write-permits", "-1"}, "write-permits"},
		{[]string{"run", "--target", url, "--records", "0"}, "records"},
		{[]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--profile", "nope"}, "valid profiles"},
		{[]string{"run", "--target", url}, "runs at time scale 0.05, this run at 1"},
		{[]string{"run", "--target", dead}, "unreachable"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

func TestLoadCompareModelJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"load", "--time-scale", "0.02", "--duration", "20", "--json", "--compare-model"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests", "on_time", "rejected", "too_late", "unfinished", "p95_latency_s",
		"wasted_worker_s", "peak_queue", "queue_empty_at_s", "dropped", "behind", "late_starts", "max_send_lag_ms", "timeline", "model",
		"latency_from_schedule", "latency_from_send", "client", "max_in_flight"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("progress written when stderr is not a terminal: %q", errb.String())
	}
}

func TestLoadBadInput(t *testing.T) {
	dead := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		return "http://" + ln.Addr().String() + "/enrich"
	}()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"load", "--ramp-start", "30", "--ramp-end", "20"}, "ramp-end"},
		{[]string{"load", "--base-rate", "-1"}, "base-rate"},
		{[]string{"load", "--generator", "closed", "--users", "0"}, "users"},
		{[]string{"load", "--duration", "0"}, "duration"},
		{[]string{"load", "--time-scale", "0"}, "time-scale"},
		{[]string{"load", "--arrivals", "poisson"}, "arrivals"},
		{[]string{"load", "--target", "ftp://x"}, "target"},
		{[]string{"load", "--target", dead, "--time-scale", "0.01"}, "unreachable"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

func TestExperimentRefusesAnEditedHypothesesFile(t *testing.T) {
	dir := t.TempDir()
	spec := dir + "/spec.yaml"
	hyp := dir + "/h.yaml"
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(spec, "name: t\nrecords: 5\nruns: 3\ntime_scale: 0.05\ncall_timeout: 2s\npermit_timeout: 1s\nstrategies: [C4]\nscenarios: [healthy]\ncpus:\n  - {name: one, cpuset: 1}\n")
	h := "hypotheses:\n  - id: A\n    claim: c\n    source: s\n    metric: write_rejections\n    cell: {strategy: C4, scenario: healthy, cpu: one}\n    op: \"==\"\n    threshold: 0\n"
	write(hyp, h)
	var out, errb bytes.Buffer
	if code := run([]string{"preregister", "--file", spec, "--hypotheses", hyp}, &out, &errb); code != 0 {
		t.Fatalf("preregister: %d %s", code, errb.String())
	}
	write(hyp, strings.Replace(h, "threshold: 0", "threshold: 1", 1))
	errb.Reset()
	if code := run([]string{"experiment", "--file", spec, "--hypotheses", hyp, "--out", dir + "/out"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "refusing to judge") {
		t.Errorf("exit %d, stderr %q; want 2, refusing to judge", code, errb.String())
	}
	if _, err := os.Stat(dir + "/out"); err == nil {
		t.Error("results were written")
	}
}

// Calibration overrides the design cannot take are refused naming the
// flag, before anything runs.
func TestExperimentBadCalibration(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--calibration-runs", "9"}, "--calibration-runs: 9 must be in [0, the runs 5]"},
		{[]string{"--max-bias", "-0.1"}, "--max-bias: -0.1 must be > 0"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"experiment", "--file", "../../experiments/replication.yaml", "--hypotheses", "../../experiments/hypotheses-v5.yaml"}, c.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// loadlab check re-judges the first results of the replication (range-v1
// rules, format 1: no raw data kept) from their stored metrics, and every
// committed results folder from its raw data, finding the same verdicts.
func TestCheckCommittedResults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"check", "../../experiments/exptest/testdata/range-v1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "H10  refuted") || !strings.Contains(out.String(), "re-judged from the stored metrics (format 1: no raw data kept): all match") {
		t.Errorf("output:\n%s", out.String())
	}
	// Every committed results folder: recomputed from raw data. A folder
	// committed without a figure here fails, so none is left out.
	want := map[string]string{
		// Phased runs: phases, restarts and faults re-derived; the built-in
		// scenarios must still be the ones locked.
		"conditions-v1": "36 runs, 12 cells and 11 verdicts recomputed from raw data: all match",
		"adaptive-v2":   "105 runs, 35 cells and 18 verdicts recomputed from raw data: all match",
		// Paired-v3: the calibration's runs at time scale 1 recomputed too.
		"replication-v4": "90 runs, 10 runs at time scale 1, 2 calibrated cells, 18 cells and 21 verdicts recomputed from raw data: all match",
		"container-v3":   "55 runs, 10 runs at time scale 1, 2 calibrated cells, 11 cells and 11 verdicts recomputed from raw data: all match",
		// One's own services: runs against virtual copies, reconciled with
		// their counts, the copies kept in the results.
		"shop-v1": "50 runs, 6 runs at time scale 1, 2 calibrated cells, 10 cells and 6 verdicts recomputed from raw data: all match"}
	entries, err := os.ReadDir("../../experiments/results")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		w, ok := want[e.Name()]
		if !ok {
			t.Errorf("experiments/results/%s: no figure to check it against", e.Name())
			continue
		}
		out.Reset()
		if code := run([]string{"check", "../../experiments/results/" + e.Name()}, &out, &errb); code != 0 || !strings.Contains(out.String(), w) {
			t.Errorf("check %s: exit %d:\n%s%s", e.Name(), code, out.String(), errb.String())
		}
	}
}

// An experiment of fewer than 3 runs, and a check of a folder without
// results, exit 2 saying why.
func TestExperimentAndCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "--file", "../../experiments/replication.yaml", "--runs", "2"}, "runs: 2 must be in [3, 1000] (a range over fewer runs is not a range)"},
		{[]string{"check", dir}, dir + "/results.json"},
		// An experiment file of other cells, without its hypotheses: the
		// built-in ones do not fit, and the refusal says so.
		{[]string{"experiment", "--file", "../../experiments/conditions.yaml"}, "those are the replication's hypotheses, built into loadlab, of its cells: give your experiment's with --hypotheses FILE"},
	} {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// loadlab check --reports draws a results folder's reports again from its
// results.json, once the recomputation matches.
func TestCheckWritesReports(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../experiments/results/conditions-v1/results.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The folder before or after the flag.
	for _, args := range [][]string{{"check", dir, "--reports"}, {"check", "--reports", dir}} {
		os.Remove(filepath.Join(dir, "report.md"))
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || !strings.Contains(out.String(), "Wrote "+filepath.Join(dir, "report.md")) {
			t.Fatalf("%q: exit %d: %s%s", args, code, out.String(), errb.String())
		}
		for _, f := range []string{"report.md", "report.html"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || !strings.Contains(string(b), "write-capacity-drop") {
				t.Errorf("%q: %s: %v, %d bytes", args, f, err, len(b))
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"check", dir, dir}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "one results folder, not 2") {
		t.Errorf("two folders: exit %d: %s", code, errb.String())
	}
}
