package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/api"
)

const cliPipeline = `name: two
dependencies:
  - name: lookup
    path: /enrich
    body: '{"record_id":{{json .ID}},"step":1}'
  - name: ledger
    path: /records
    body: '{"id":{{json .ID}},"complete":{{.Complete}}}'
steps:
  - dependency: lookup
  - dependency: ledger
    required: true
`

// loadlab run --pipeline with --permits by the pipeline's names, and with
// a strategy file; bad pipelines and strategy files exit 2 naming the
// file, the line and the field, before anything is sent.
func TestRunPipelineFlags(t *testing.T) {
	url := startMock(t, 0.05)
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p := write("p.yaml", cliPipeline)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", url, "--pipeline", p, "--strategy", "bounded:8", "--permits", "lookup=4,ledger=2",
		"--records", "30", "--time-scale", "0.05", "--json"}, &out, &errb)
	var res struct {
		Complete     int            `json:"complete"`
		CallsSent    map[string]int `json:"calls_sent"`
		PeakInFlight map[string]int `json:"peak_in_flight"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errb.String())
	}
	// The server's own count of writes at once: the ledger budget held.
	st, err := api.Client{BaseURL: url}.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	peak := st.Stations[api.Records].HighWater.Offered
	if res.Complete != 30 || res.CallsSent["lookup"] != 30 || res.CallsSent["ledger"] != 30 || res.PeakInFlight["lookup"] > 4 || peak < 1 || peak > 2 {
		t.Errorf("%+v; server's peak writes %d", res, peak)
	}
	sf := write("s.yaml", "strategy:\n  name: mine\n  records_in_flight: 5\n  permits:\n    ledger: 2\n    geo: 3\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pipeline", write("bad.yaml", strings.Replace(cliPipeline, "dependency: ledger", "dependency: ledgr", 1))},
			`bad.yaml:11: steps.1.dependency: unknown dependency "ledgr"`},
		{[]string{"--pipeline", write("tpl.yaml", strings.Replace(cliPipeline, "{{.Complete}}", "{{.Done}}", 1))},
			"tpl.yaml:8: dependencies.1.body: "},
		{[]string{"--pipeline", p, "--strategy-file", sf}, `s.yaml:6: strategy.permits.geo: "geo" is not a dependency of pipeline two`},
		{[]string{"--pipeline", p, "--permits", "geo=3"}, `a budget for "geo", which pipeline two`},
		{[]string{"--strategy-file", sf, "--strategy", "C4"}, "--strategy and --strategy-file: give one"},
		{[]string{"--pipeline", p, "--strategy-file", write("z.yaml", "strategy:\n  name: z\n  records_in_flight: 5\n  permits:\n    ledger: 0\n")},
			"z.yaml:5: strategy.permits.ledger: 0 must be ≥ 1"},
		{[]string{"--permits", "records=x"}, `--permits: "records=x" is not name=number`},
	} {
		out.Reset()
		errb.Reset()
		args := append([]string{"run", "--target", url, "--time-scale", "0.05", "--records", "5"}, c.args...)
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// loadlab run --faults: resets on enrichment make every enrichment call an
// error, said by kind in the exit-1 reason; a bad faults file exits 2
// naming its line and field.
func TestRunWithFaults(t *testing.T) {
	url := startMock(t, 0.05)
	dir := t.TempDir()
	f := filepath.Join(dir, "faults.yaml")
	os.WriteFile(f, []byte("faults:\n  - dependency: enrichment\n    kind: reset\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--records", "5", "--faults", f}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "enrichment: connection reset ×5") || !strings.Contains(out.String(), "incomplete 5") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	os.WriteFile(f, []byte("faults:\n  - dependency: records\n    kind: latency\n    latency: -1s\n"), 0o644)
	errb.Reset()
	if code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--records", "5", "--faults", f}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "faults.yaml:4: faults.0.latency: -1s must be ≥ 0") {
		t.Errorf("bad faults file: exit %d, %s", code, errb.String())
	}
	os.WriteFile(f, []byte("faults:\n  - dependency: geo\n    kind: reset\n"), 0o644)
	errb.Reset()
	if code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--records", "5", "--faults", f}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), `a fault for "geo"`) {
		t.Errorf("a fault for a dependency the pipeline lacks: exit %d, %s", code, errb.String())
	}
}
