package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestSimulateConcurrencyJSONKeys(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"simulate", "concurrency", "--json", "--seeds", "1-10", "--limits", "1,48"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string][]map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 1 || len(doc["strategies"]) != 2 {
		t.Fatalf("top level %v, want only strategies with 2 entries", out.String())
	}
	metricKeys := []string{"client_outcome_ms", "completed", "max_queue_wait_ms", "p95_queue_wait_ms", "peak_in_flight",
		"peak_queue", "server_drain_ms", "timed_out", "work_after_timeout_ms"}
	for _, st := range doc["strategies"] {
		if got := sortedKeys(st); !slices.Equal(got, []string{"limit", "max", "median", "min", "name"}) {
			t.Errorf("strategy keys %v", got)
		}
		for _, stat := range []string{"median", "min", "max"} {
			var m map[string]float64
			if err := json.Unmarshal(st[stat], &m); err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(m); !slices.Equal(got, metricKeys) {
				t.Errorf("%s keys %v, want %v", stat, got, metricKeys)
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestSimulateHumanOutput(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"simulate", "concurrency"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Scenario SHA-256: ", "11.518 s", "1.188 s", "46 / 48"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"simulate", "admission", "--queue", "50"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"on time 96, rejected 70, served too late 116", "wasted worker-seconds 232", "queue "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("admission output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSimulateAdmissionJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"simulate", "admission", "--generator", "closed", "--users", "16", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests", "on_time", "rejected", "too_late", "unfinished", "p95_latency_s",
		"wasted_worker_s", "peak_queue", "queue_empty_at_s"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q in %s", k, out.String())
		}
	}
	if m["on_time"] != 231.0 {
		t.Errorf("on_time %v, want 231", m["on_time"])
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	tests := [][]string{
		{},
		{"nope"},
		{"simulate"},
		{"simulate", "weather"},
		{"simulate", "concurrency", "--seeds", "9-1"},
		{"simulate", "concurrency", "--seeds", "0-4294967295"},
		{"simulate", "concurrency", "--limits", "0"},
		{"simulate", "concurrency", "--durations", "75:80"},
		{"simulate", "concurrency", "--workers", "x"},
		{"simulate", "concurrency", "--real", "--time-scale", "0"},
		{"simulate", "concurrency", "--real", "--seeds", "1-5000"},
		{"simulate", "concurrency", "--real", "--time-scale", "0.001"},
		{"simulate", "concurrency", "--time-scale", "0.5"},
		{"simulate", "admission", "--ramp-start", "30", "--ramp-end", "20"},
		{"simulate", "admission", "--generator", "poisson"},
		{"simulate", "admission", "extra"},
	}
	for _, args := range tests {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code != 2 || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"simulate", "admission", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-peak-rate") {
		t.Errorf("help: exit %d, %q", code, out.String())
	}
}
