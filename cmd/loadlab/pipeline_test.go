package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
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
		"--records", "30", "--time-scale", "0.05", "--call-timeout", "200s", "--json"}, &out, &errb)
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
		{[]string{"--pipeline", p, "--permits", "lookup=4,ledger=2", "--write-permits", "3"},
			"run: --write-permits: names the lab's records, which pipeline two lacks: give its dependencies' budgets by name (lookup, ledger)"},
		{[]string{"--strategy-file", sf, "--strategy", "C4"}, "--strategy and --strategy-file: give one"},
		{[]string{"--pipeline", p, "--strategy-file", write("z.yaml", "strategy:\n  name: z\n  records_in_flight: 5\n  permits:\n    ledger: 0\n")},
			"z.yaml:5: strategy.permits.ledger: 0 must be ≥ 1"},
		{[]string{"--permits", "records=x"}, `--permits: "records=x" is not name=number`},
	} {
		out.Reset()
		errb.Reset()
		args := append([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "5"}, c.args...)
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
	code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "5", "--faults", f}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "enrichment: connection reset ×5") || !strings.Contains(out.String(), "incomplete 5") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	os.WriteFile(f, []byte("faults:\n  - dependency: records\n    kind: latency\n    latency: -1s\n"), 0o644)
	errb.Reset()
	if code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "5", "--faults", f}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "faults.yaml:4: faults.0.latency: -1s must be ≥ 0") {
		t.Errorf("bad faults file: exit %d, %s", code, errb.String())
	}
	os.WriteFile(f, []byte("faults:\n  - dependency: geo\n    kind: reset\n"), 0o644)
	errb.Reset()
	if code := run([]string{"run", "--target", url, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "5", "--faults", f}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), `a fault for "geo"`) {
		t.Errorf("a fault for a dependency the pipeline lacks: exit %d, %s", code, errb.String())
	}
}

// A strategy flag that the strategy cannot take is refused naming the flag
// given, and the strategy, before anything is sent; flags that make room
// for it (--shared-permits 0, --adaptive dep=off) are taken.
func TestRunStrategyOverridesNameTheFlagGiven(t *testing.T) {
	t.Parallel() // nothing is sent
	dead := "http://127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--enrichment-rate", "-1"}, "run: --enrichment-rate: -1 must be ≥ 0 (0 for none)"},
		{[]string{"--strategy", "C3", "--write-permits", "2"}, "run: --write-permits: strategy C3 shares one budget of 30 permits"},
		{[]string{"--strategy", "C3", "--permits", "records=2"}, "run: --permits: records: strategy C3 shares one budget"},
		{[]string{"--strategy", "C5-aimd", "--write-permits", "3"}, "run: --write-permits: strategy C5-aimd gives records an adaptive limit"},
		{[]string{"--permits", "geo=3"}, `--permits: geo: a budget for "geo", which pipeline lab`},
		{[]string{"--strategy", "C1", "--rates", "geo=3"}, `--rates: geo: a budget for "geo", which pipeline lab (client/pipeline/lab.yaml) lacks: its dependencies are enrichment, records (strategy C1)`},
		{[]string{"--records-in-flight", "-5"}, "--records-in-flight: -5 must be ≥ 1, or 0 for the runtime default, or -1 for unbounded (strategy C4)"},
		{[]string{"--write-permits", "2", "--permits", "records=3"}, "--write-permits: records's budget is given by name too"},
		{[]string{"--write-rate", "2", "--rates", "records=3"}, "run: --write-rate: records's budget is given by name too"},
		{[]string{"--enrichment-permits", "-1"}, "run: --enrichment-permits: -1 must be ≥ 1 (or 0 for none)"},
		{[]string{"--strategy", "C3", "--shared-permits", "0", "--write-permits", "2"}, "target unreachable"},
		{[]string{"--strategy", "C5", "--adaptive", "records=off", "--write-permits", "3"}, "target unreachable"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"run", "--target", dead, "--records", "1"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// A mock service that refuses the reset before a run (its admin token is
// missing) is bad input naming the flags that mend it; one that refuses a
// profile is not sent that hint, which would not help.
func TestRunAdminRefusals(t *testing.T) {
	t.Parallel() // nothing is sent
	cfg := config.Default()
	cfg.AdminToken, cfg.TimeScale = "sekret", 0.05
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", m.URL, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "1"}, &out, &errb)
	if msg := errb.String(); code != exitUsage || !strings.Contains(msg, "the reset was refused") || !strings.Contains(msg, "(give --admin-token, or --reset=false)") {
		t.Errorf("reset refused: exit %d, %q", code, msg)
	}
	errb.Reset()
	code = run([]string{"run", "--target", m.URL, "--time-scale", "0.05", "--call-timeout", "200s", "--records", "1", "--admin-token", "sekret", "--profile", "nosuch"}, &out, &errb)
	if msg := errb.String(); code != exitUsage || !strings.Contains(msg, "nosuch") || strings.Contains(msg, "--reset=false") {
		t.Errorf("profile refused: exit %d, %q", code, msg)
	}
}

// An optional step refused (429) leaves its record incomplete: the
// headline says how many, rejected counts the refused calls (a
// percentage of the calls made) and rejected.lookup the dependency's,
// which records_rejected (records refused) does not.
func TestOptionalStepRejectionsAreCounted(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.05
	cfg.Enrichment = config.Station{Workers: 1, Queue: 0, RejectStatus: 429}
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	p := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(p, []byte(cliPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"run", "--target", m.URL, "--pipeline", p, "--strategy", "bounded:8", "--permits", "lookup=4,ledger=2",
		"--records", "30", "--time-scale", "0.05", "--call-timeout", "200s", "--json", "--threshold", "records_rejected==0", "--threshold", "rejected==0,rejected.lookup<=100%,rejected.ledger==0"}, &out, &errb)
	var res struct {
		Records    int                       `json:"records"`
		Complete   int                       `json:"complete"`
		Incomplete int                       `json:"incomplete"`
		Calls      map[string]map[string]int `json:"calls"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errb.String())
	}
	refused := res.Calls["lookup"]["rejected"]
	msg := errb.String()
	if code != 99 || refused == 0 || res.Incomplete == 0 || res.Complete+res.Incomplete != res.Records {
		t.Fatalf("exit %d, %+v: %s", code, res, msg)
	}
	// One of four breached: records_rejected==0 and the dependencies' held.
	calls := 0
	for _, byClass := range res.Calls {
		for _, n := range byClass {
			calls += n
		}
	}
	lookups := 0
	for _, n := range res.Calls["lookup"] {
		lookups += n
	}
	if !strings.Contains(msg, fmt.Sprintf("1 of 4 thresholds breached: rejected==0: measured %d,", refused)) || lookups == 0 || calls <= lookups {
		t.Errorf("breach names rejected (%d refused lookups of %d, %d calls) alone: %s", refused, lookups, calls, msg)
	}
	if code := run([]string{"run", "--target", m.URL, "--pipeline", p, "--permits", "lookup=4,ledger=2", "--threshold", "rejected.lokup<1%"}, &out, &errb); code != exitUsage ||
		!strings.Contains(errb.String(), `no "lokup" to measure (did you mean rejected.lookup?); there are: lookup, ledger`) {
		t.Errorf("a threshold on no dependency: exit %d: %s", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"run", "--target", m.URL, "--pipeline", p, "--permits", "lookup=4,ledger=2", "--records", "30", "--time-scale", "0.05", "--call-timeout", "200s",
		"--threshold", "rejected.lookup<=100%"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// Each percentage says what it is of: the dependency's calls.
	var pct float64
	var n, of int
	i := strings.Index(out.String(), "threshold rejected.lookup<=100%: measured ")
	if i < 0 {
		t.Fatalf("no threshold line:\n%s", out.String())
	}
	if _, err := fmt.Sscanf(out.String()[i:], "threshold rejected.lookup<=100%%: measured %g%% (%d of %d), held", &pct, &n, &of); err != nil ||
		n == 0 || of < n || !regexp.MustCompile(fmt.Sprintf(`Calls to lookup: ok \d+, rejected %d,`, n)).MatchString(out.String()) ||
		!strings.Contains(out.String(), fmt.Sprintf("OVERLOAD: %d of ", n)) {
		t.Errorf("%v: %g%% (%d of %d):\n%s", err, pct, n, of, out.String())
	}
	if !strings.Contains(out.String(), " complete, ") || !strings.Contains(out.String(), " incomplete) in ") {
		t.Errorf("headline lacks complete and incomplete:\n%s", out.String())
	}
}

// A run whose writes are refused says so beside its rate, and that
// refusals alone exit 0 unless a threshold says otherwise.
func TestOverloadIsSaid(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.05
	cfg.Records = config.Station{Workers: 1, Queue: 0, RejectStatus: 503}
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	base := []string{"run", "--target", m.URL, "--strategy", "C2", "--records", "30", "--time-scale", "0.05", "--call-timeout", "200s"}
	var out, errb bytes.Buffer
	if code := run(base, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	var refused, records int
	i := strings.Index(text, "OVERLOAD: ")
	if i < 0 || i > strings.Index(text, "Accepted ") {
		t.Fatalf("no overload line before the headline:\n%s", text)
	}
	var calls float64
	if _, err := fmt.Sscanf(text[i:], "OVERLOAD: %d of %g calls", &refused, &calls); err != nil || refused == 0 ||
		!strings.Contains(text, fmt.Sprintf("; %d of 30 records refused", refused)) {
		t.Errorf("%v: %d of %g calls:\n%s", err, refused, calls, text)
	}
	records = 30
	if refused == 0 || records != 30 ||
		!strings.Contains(text, fmt.Sprintf("write_rejected %d", refused)) || !strings.Contains(text, "refusals alone exit 0: --threshold 'rejected<1%' makes them exit 99.") {
		t.Errorf("%d of %d:\n%s", refused, records, text)
	}
	out.Reset()
	if code := run(append(base, "--threshold", "rejected<=100%"), &out, &errb); code != 0 || !strings.Contains(out.String(), "OVERLOAD: ") || strings.Contains(out.String(), "refusals alone") {
		t.Errorf("with a threshold: exit %d:\n%s", code, out.String())
	}
}
