package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/strategy"
)

// loadlab run --strategy C5-vegas runs with Vegas limits, says so, and
// reports the limits at the end; --adaptive overrides one dependency's.
func TestRunAdaptive(t *testing.T) {
	url := startMock(t, 0.05)
	var out, errb bytes.Buffer
	// Call timeouts of 10 real seconds (200 lab s at 0.05): the test reads
	// the strategy and its limits, and the default's 100 ms a stall beside
	// other work can pass.
	code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "40", "--strategy", "C5-vegas",
		"--adaptive", "records=vegas:1:3:12:2:3:1:10:30"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "records adaptive (Vegas from 3 in [1, 12], queue thresholds α 2 β 3 threshold 1, windows of 10 calls, probe 30)") ||
		!strings.Contains(out.String(), "enrichment adaptive (Vegas from 24 in [1, 64]") || !strings.Contains(out.String(), "Adaptive limits at the end: enrichment ") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	out.Reset()
	code = run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "10", "--strategy", "C5", "--json"}, &out, &errb)
	var res struct {
		Strategy struct {
			Name     string                            `json:"name"`
			Adaptive map[string]strategy.AdaptiveLimit `json:"adaptive"`
		} `json:"strategy_params"`
		Limits map[string]int `json:"adaptive_limits"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || code != 0 || res.Strategy.Name != "C5-aimd" ||
		res.Strategy.Adaptive["records"].Describe() != "AIMD from 6 in [1, 12], ×0.9 on a drop" || res.Limits["records"] == 0 {
		t.Errorf("C5 is C5-aimd: exit %d, %+v (%v)", code, res, err)
	}
}

// Bad adaptive limits exit 2 naming the field, before any run.
func TestRunAdaptiveErrors(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"records=3:2:12", "--adaptive: records: aimd.initial: 2 must be in [floor 3, ceiling 12]"},
		{"records=8:8:6", "--adaptive: records: aimd.ceiling: 6 must be ≥ the floor, 8"},
		{"records=1:6:12:1.5", "--adaptive: records: aimd.backoff: 1.5 must be in (0, 1)"},
		{"records=1:6:12:0", "--adaptive: records: aimd.backoff: 0 must be in (0, 1)"},
		{"records=vegas:1:6:12:3:2:0", "--adaptive: records: vegas.beta: 2 must be ≥ alpha, 3"},
		{"records=vegas:1:6:12:2:2:0:0", "--adaptive: records: vegas.window: 0 must be ≥ 1 call"},
		{"records=vegas:1:6:x", `--adaptive: records: vegas.ceiling: "x" is not a whole number`},
		{"records=vegas:1:6:12:2", "vegas: give FLOOR:INITIAL:CEILING[:ALPHA:BETA:THRESHOLD[:WINDOW[:PROBE]]]"},
		{"records", `--adaptive: "records" is not dep=`},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"run", "--target", "http://127.0.0.1:1", "--records", "5", "--adaptive", c.arg}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("--adaptive %s: exit %d, %q; want 2 and %q", c.arg, code, errb.String(), c.want)
		}
	}
}

// Bad retries exit 2 naming the field, before any run; good ones are
// described with the strategy.
func TestRunRetries(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--retries", "0"}, "--retries: attempts: 0 must be ≥ 1 (1: no retry)"},
		{[]string{"--strategy", "C6", "--retry-budget", "1.5:2"}, "--retry-budget: ratio: 1.5 must be in [0, 1]"},
		{[]string{"--retry-budget", "-0.1:2"}, "--retry-budget: ratio: -0.1 must be in [0, 1]"},
		{[]string{"--retry-budget", "0.2"}, `--retry-budget: "0.2" is not RATIO:MIN_PER_SECOND[:TTL] or off`},
		{[]string{"--retry-budget", "0.2:2:0s"}, "--retry-budget: ttl: 0s must be > 0"},
		{[]string{"--retries", "3", "--retry-backoff", "1s:10ms"}, "--retries: base_backoff: 1s must be ≤ max_backoff (10ms)"},
		{[]string{"--retry-backoff", "soon"}, `--retry-backoff: "soon" is not BASE:MAX`},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"run", "--target", "http://127.0.0.1:1", "--records", "5"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	url := startMock(t, 0.05)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "20", "--strategy", "C6", "--retries", "2", "--retry-budget", "0.1:1"}, &out, &errb)
	if want := "retries: 2 attempts, full-jitter backoff from 25ms to 1s (lab), a retry budget per dependency of 0.1 of first attempts within 10s plus 1 per lab s"; code != 0 || !strings.Contains(out.String(), want) {
		t.Errorf("exit %d, want %q in\n%s\n%s", code, want, out.String(), errb.String())
	}
}

// A strategy file carries adaptive limits and retries; a bad one exits 2
// naming its line and field.
func TestStrategyFileAdaptiveAndRetries(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("s.yaml", `strategy:
  name: mine
  records_in_flight: 8
  adaptive:
    records:
      vegas: {initial: 4, floor: 1, ceiling: 12, alpha: 2, beta: 2, threshold: 0, window: 10, probe: 30}
  retries:
    attempts: 2
    base_backoff: 10ms
    max_backoff: 100ms
    budget: {ratio: 0.1, min_per_second: 1, ttl: 5s}
`)
	url := startMock(t, 0.05)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "20", "--strategy-file", good}, &out, &errb)
	for _, want := range []string{"records adaptive (Vegas from 4 in [1, 12]", "retries: 2 attempts, full-jitter backoff from 10ms to 100ms (lab), a retry budget per dependency of 0.1 of first attempts within 5s plus 1 per lab s"} {
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("exit %d, want %q in\n%s\n%s", code, want, out.String(), errb.String())
		}
	}
	for _, c := range []struct{ text, want string }{
		{strings.Replace(string(mustRead(t, good)), "alpha: 2, beta: 2", "alpha: 3, beta: 2", 1), "bad.yaml:5: strategy.adaptive.records: vegas.beta: 2 must be ≥ alpha, 3"},
		{strings.Replace(string(mustRead(t, good)), "attempts: 2", "attempts: 0", 1), "bad.yaml:7: strategy.retries: attempts: 0 must be ≥ 1"},
		{strings.Replace(string(mustRead(t, good)), "ratio: 0.1", "ratio: 2", 1), "bad.yaml:11: strategy.retries.budget: ratio: 2 must be in [0, 1]"},
	} {
		out.Reset()
		errb.Reset()
		code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "5", "--strategy-file", write("bad.yaml", c.text)}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("exit %d, %q; want 2 and %q", code, errb.String(), c.want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
