package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// A phased run started at a given time: the JSON's keys are the ones the
// experiment runner reads, the phases add up, and the human output has the
// per-phase table.
func TestRunPhasesJSONAndTable(t *testing.T) {
	url := startMock(t, 0.1)
	at := time.Now().Add(200 * time.Millisecond).UTC()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", url, "--time-scale", "0.1", "--strategy", "C4", "--phases", "one=1s,two=1s",
		"--start-at", at.Format(time.RFC3339Nano), "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"started_at", "start_late_seconds", "duration_limit_lab_seconds", "phases", "per_second"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	started, err := time.Parse(time.RFC3339Nano, m["started_at"].(string))
	if err != nil || started.Before(at) || m["duration_limit_lab_seconds"] != 2.0 || m["not_started"] != 0.0 {
		t.Errorf("started_at %v (told %v), limit %v, not_started %v", m["started_at"], at, m["duration_limit_lab_seconds"], m["not_started"])
	}
	phases := m["phases"].([]any)
	begun := 0.0
	for i, p := range phases {
		ph := p.(map[string]any)
		for _, k := range []string{"name", "start", "end", "begun", "ended", "accepted", "accepted_per_lab_second",
			"write_rejections", "states", "peak_concurrent_writes", "record_latency_ms"} {
			if _, ok := ph[k]; !ok {
				t.Errorf("phase %d: missing %q", i, k)
			}
		}
		lat := ph["record_latency_ms"].(map[string]any)
		for _, k := range []string{"p50", "p95", "p99", "max"} {
			if _, ok := lat[k]; !ok {
				t.Errorf("phase %d: record_latency_ms: missing %q", i, k)
			}
		}
		begun += ph["begun"].(float64)
	}
	if len(phases) < 2 || phases[0].(map[string]any)["name"] != "one" || phases[1].(map[string]any)["end"] != 2.0 || begun != m["records"] {
		t.Errorf("phases %v; %v begun of %v records", phases, begun, m["records"])
	}
	for i, s := range m["per_second"].([]any) {
		sec := s.(map[string]any)
		if sec["t"] != float64(i) || sec["accepted"] == nil || sec["write_rejections"] == nil || sec["ended"] == nil {
			t.Errorf("per_second[%d] = %v", i, sec)
		}
	}

	out.Reset()
	if code := run([]string{"run", "--target", url, "--time-scale", "0.1", "--phases", "one=1s,two=1s"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Time-bounded: records began for 2 lab s", "phase", "lab s", "accepted per lab s",
		"503s (write rejections)", "peak concurrent writes", "p50 lab ms", "p95 lab ms", "p99 lab ms", "\n  one ", "\n  two "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"run", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, f := range []string{"-duration", "-phases", "-start-at", "-call-url"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("help lacks %s", f)
		}
	}
}

// --call-url sends the writes to another mock service; identification,
// reset and metrics stay with the target.
func TestRunCallURL(t *testing.T) {
	target, other := startMock(t, 0.05), startMock(t, 0.05)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", target, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "10", "--call-url", "records=" + other, "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	a, err := api.Client{BaseURL: target}.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Client{BaseURL: other}.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a.StoredWrites != 0 || b.StoredWrites != 10 || a.Stations[api.Enrichment].HighWater.Offered == 0 {
		t.Errorf("target stored %d writes, the --call-url %d; want 0 and 10", a.StoredWrites, b.StoredWrites)
	}
}

// Bad time flags exit 2 naming the flag, and nothing is sent.
func TestRunTimeFlagsBadInput(t *testing.T) {
	url := startMock(t, 0.05)
	base := []string{"run", "--target", url, "--time-scale", "0.05"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "-1s"}, "duration: -1s must be ≥ 0"},
		{[]string{"--phases", "a=1s,a=2s"}, `phases: "a" appears twice`},
		{[]string{"--phases", "a=1s,b"}, `--phases: "b" is not name=duration`},
		{[]string{"--phases", "a=1s,b=0s"}, "phases: b: duration 0s must be > 0"},
		{[]string{"--phases", "a=1s,=1s"}, "phases: phase 2 has no name"},
		{[]string{"--phases", "a=1s,b=1s", "--duration", "3s"}, "phases: they add up to 2s, not the duration 3s"},
		{[]string{"--start-at", "tomorrow"}, "--start-at"},
		{[]string{"--call-url", "nope=http://127.0.0.1:9"}, `call-url: "nope" is not a dependency`},
		{[]string{"--call-url", "records=127.0.0.1:9"}, "call-url: records"},
		{[]string{"--call-url", "records"}, "--call-url"},
	} {
		var out, errb bytes.Buffer
		if code := run(append(base, tt.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
	st, err := api.Client{BaseURL: url}.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Stations[api.Enrichment].HighWater.Offered != 0 || st.Stations[api.Records].HighWater.Offered != 0 {
		t.Errorf("records were sent: %+v", st.Stations)
	}
}
