package experiments

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const advisedSpec = `name: advised
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

// The strategy "advised" end to end: the runner probes both dependencies
// on the real mock service under the cell's profile, advises, and runs the
// advice as a strategy file; the probes and the advice are in the results,
// and loadlab check recomputes the cells from them.
func TestAdvisedCellsEndToEnd(t *testing.T) {
	t.Parallel() // it checks counts and the advice's rules, not speed
	bin := buildLoadlab(t)
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", advisedSpec))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := LoadHypotheses(writeFile(t, dir, "h.yaml", `rules: paired-v2
hypotheses:
  - id: A1
    claim: The advised strategy gets no write 503s under slow writes.
    source: test
    metric: write_rejections
    cell: {strategy: advised, scenario: slow-write, cpu: cpus-1}
    op: "=="
    threshold: 0
`), spec)
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := startMock(t, spec)
	var probed []string
	r := &Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: mockCfg, Progress: func(p Progress) {
		if p.Advising != "" {
			probed = append(probed, p.Advising)
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Advised["slow-write"]
	if a == nil || a.Failed != "" || len(a.Probes) != 2 || strings.Join(probed, ",") != "slow-write/enrichment,slow-write/records" {
		t.Fatalf("advice %+v; probed %v", a, probed)
	}
	t.Logf("advised: %+v; bottleneck %s at %.1f records/s real; knee of records %v", a.Strategy, a.Advice.Bottleneck, a.Advice.RateBound, a.Probes["records"].Knee)
	rb := a.Probes["records"].RejectionsBeginAt
	permits := a.Strategy.Permits["records"]
	if rb == nil || *rb != 13 || permits < 1 || permits >= *rb || a.Strategy.RecordsInFlight < 1 {
		t.Errorf("records: rejections from %v, permits %d; strategy %+v", rb, permits, a.Strategy)
	}
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
		}
		if run.Cell.Strategy == Advised && (run.Client.Params.PermitsFor("records") != permits || run.Metrics["peak_concurrent_writes"] > float64(permits)) {
			t.Errorf("advised run %d: params %+v, peak writes %v", run.Run, run.Client.Params, run.Metrics["peak_concurrent_writes"])
		}
	}
	if len(res.Verdicts) != 1 || res.Verdicts[0].ValidRuns["advised/slow-write/cpus-1"] != 3 {
		t.Errorf("verdicts %+v", res.Verdicts)
	}
	out := filepath.Join(dir, "out")
	if err := WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(back, *mockCfg); err != nil {
		t.Errorf("check of the written results: %v", err)
	}
}

// advise.file: the advised cells run a strategy file under every scenario,
// without probing; a file that does not fit the lab's pipeline is refused
// at load, naming the spec's line and the strategy file's.
func TestAdvisedFromAFile(t *testing.T) {
	t.Parallel()
	bin := buildLoadlab(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "mine.yaml", "strategy:\n  name: mine\n  records_in_flight: 8\n  permits:\n    records: 3\n")
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", strings.Replace(tinySpec, "[C2, C4]", "[C4, advised]", 1)+"advise:\n  file: "+file+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := startMock(t, spec)
	r := &Runner{Spec: spec, Binary: bin, Target: url, MockConfig: mockCfg, Progress: func(p Progress) {
		if p.Advising != "" {
			t.Errorf("probed %s with a strategy file given", p.Advising)
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Advised["slow-write"]; a == nil || a.From != file || a.Strategy.Permits["records"] != 3 {
		t.Fatalf("advised %+v", a)
	}
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
		}
		if run.Cell.Strategy == Advised && (run.Client.RecordsInFlight != 8 || run.Metrics["peak_concurrent_writes"] > 3) {
			t.Errorf("advised run %d: %d in flight, peak writes %v", run.Run, run.Client.RecordsInFlight, run.Metrics["peak_concurrent_writes"])
		}
	}
	bad := writeFile(t, dir, "bad.yaml", "strategy:\n  name: bad\n  records_in_flight: 8\n  permits:\n    ledger: 3\n")
	_, err = LoadSpec(writeFile(t, dir, "spec2.yaml", strings.Replace(tinySpec, "[C2, C4]", "[C4, advised]", 1)+"advise:\n  file: "+bad+"\n"))
	if err == nil || !strings.Contains(err.Error(), "spec2.yaml:13: advise.file: ") || !strings.Contains(err.Error(), `bad.yaml:5: strategy.permits.ledger`) {
		t.Errorf("a strategy file for another pipeline: %v", err)
	}
}
