package experiments

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

func TestDecide(t *testing.T) {
	num := func(x float64) Threshold { return Threshold{Value: x} }
	tests := []struct {
		op     string
		t      Threshold
		lo, hi float64
		want   string
	}{
		{"==", num(0), 0, 0, Supported},
		{"==", num(0), 1, 3, Refuted},
		{"==", num(2), 1, 3, Inconclusive},
		{"!=", num(0), 1, 3, Supported},
		{"<=", num(6), 4, 6, Supported},
		{"<=", num(6), 7, 9, Refuted},
		{"<=", num(6), 5, 7, Inconclusive},
		{"<", num(6), 4, 6, Inconclusive},
		{">", num(0), 1, 5, Supported},
		{">", num(0), 0, 0, Refuted},
		{">=", num(1), 0.95, 1.05, Inconclusive},
		{"between", Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.85, 0.9, Supported},
		{"between", Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.93, 0.99, Refuted},
		{"between", Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.75, 0.85, Inconclusive},
		{">", num(0), math.NaN(), math.NaN(), Inconclusive},
	}
	for _, tt := range tests {
		if got := decide(tt.op, tt.t, tt.lo, tt.hi); got != tt.want {
			t.Errorf("%v %s %v over [%v, %v]: got %s, want %s", tt.op, tt.op, tt.t, tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{5, 1, 3, 9})
	if got.Median != 4 || got.Min != 1 || got.Max != 9 || got.N != 4 {
		t.Errorf("got %+v, want median 4 (mean of 3 and 5), min 1, max 9", got)
	}
	if got := Summarize([]float64{2, 7, 4}); got.Median != 4 {
		t.Errorf("odd median %v, want 4", got.Median)
	}
}

func runs(c Cell, metric string, vals ...float64) []RunRecord {
	var out []RunRecord
	for i, v := range vals {
		out = append(out, RunRecord{Cell: c, Run: i + 1, Status: RunValid, Mechanism: "cgroup v1 x", Metrics: map[string]float64{metric: v, "gomaxprocs": 2}})
	}
	return out
}

func TestJudgeOnFixedInputs(t *testing.T) {
	a := Cell{"C4", "slow-write", "cpus-1"}
	b := Cell{"C3", "slow-write", "cpus-1"}
	all := append(runs(a, "accepted_per_second", 35, 36, 34), runs(b, "accepted_per_second", 30, 31, 32)...)
	all = append(all, runs(Cell{"C2", "slow-write", "cpus-1"}, "accepted_per_second", 10, 40)...)
	all = append(all, RunRecord{Cell: a, Run: 4, Status: RunFailed, Reason: "client crashed"}) // ignored
	hs := []Hypothesis{
		{ID: "ratio", Metric: "accepted_per_second", Cell: &a, Versus: &b, Compare: "ratio", Op: ">=", Threshold: Threshold{Value: 1}},
		{ID: "refuted", Metric: "accepted_per_second", Cell: &a, Op: "<", Threshold: Threshold{Value: 20}},
		{ID: "straddle", Metric: "accepted_per_second", Cells: []Cell{{"C2", "slow-write", "cpus-1"}}, Op: ">", Threshold: Threshold{Value: 20}},
		{ID: "minus", Metric: "accepted_per_second", Minus: "gomaxprocs", Cell: &b, Op: "between", Threshold: Threshold{Lo: 28, Hi: 30, Range: true}},
		{ID: "mechanism", Metric: "gomaxprocs", Cell: &a, RequiresMechanism: "affinity", Op: "==", Threshold: Threshold{Value: 2}},
		{ID: "missing", Metric: "accepted_per_second", Cell: &Cell{"C1", "healthy", "cpus-1"}, Op: ">", Threshold: Threshold{Value: 0}},
	}
	want := map[string]string{"ratio": Supported, "refuted": Refuted, "straddle": Inconclusive, "minus": Supported,
		"mechanism": Inconclusive, "missing": Inconclusive}
	for _, v := range Judge(hs, all, 3) {
		if v.Verdict != want[v.ID] {
			t.Errorf("%s: %s (%+v), want %s", v.ID, v.Verdict, v.Cells, want[v.ID])
		}
	}
	v := Judge(hs[:1], all, 3)[0].Cells[0]
	if v.Min != 34.0/32 || v.Max != 36.0/30 || v.Runs != 3 {
		t.Errorf("ratio range [%v, %v] over %d runs; want [34/32, 36/30] over 3", v.Min, v.Max, v.Runs)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The call timeout is 20 lab s (1 s real): at the lab's 2 s (100 ms real
// at time scale 0.05) a child under its one-CPU quota, throttled while the
// package's other tests load both cores under -race, timed out enrichment
// calls now and then (69–86 of 90 sent), before and after the phased tests.
const tinySpec = `name: tiny
records: 30
runs: 3
time_scale: 0.05
call_timeout: 20s
permit_timeout: 10s
seed: 1
strategies: [C2, C4]
scenarios: [slow-write]
cpus:
  - {name: cpus-1, cpus: 1}
`

const tinyHypotheses = `hypotheses:
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

func TestSpecErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want string
	}{
		{"unknown strategy", strings.Replace(tinySpec, "[C2, C4]", "[C2, C9]", 1), "spec.yaml:8: strategies[1]: unknown strategy"},
		{"unknown scenario", strings.Replace(tinySpec, "[slow-write]", "[slow-disk]", 1), "spec.yaml:9: scenarios[0]"},
		{"zero runs", strings.Replace(tinySpec, "runs: 3", "runs: 0", 1), "spec.yaml:3: runs:"},
		{"two runs", strings.Replace(tinySpec, "runs: 3", "runs: 2", 1), "spec.yaml:3: runs: 2 must be in [3, 1000] (a range over fewer runs is not a range)"},
		{"unknown key", tinySpec + "colour: red\n", "spec.yaml:12: colour: unknown field"},
		{"malformed", "name: [\n", "spec.yaml"},
		{"cpu without limit", strings.Replace(tinySpec, "cpus: 1}", "}", 1), "cpus[0]"},
		{"bad exclude", tinySpec + "exclude:\n  - {strategies: [C3]}\n", "exclude[0].strategies[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, "spec.yaml", tt.content)
			_, err := LoadSpec(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestHypothesesRefuseUnknownNames(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown metric", "metric: write_rejections", "metric: joy", "h.yaml:5: hypotheses[0] (T1).metric: unknown metric"},
		{"unknown strategy", "{strategy: C4, scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "{strategy: C7, scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "unknown strategy \"C7\""},
		{"unknown scenario", "scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "scenario: healthy, cpu: cpus-1}\n    op: \"==\"", "unknown scenario"},
		{"bad operator", `op: "=="`, `op: "~"`, "op:"},
		{"between needs a range", `op: "<="`, `op: between`, "threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, "h.yaml", strings.Replace(tinyHypotheses, tt.from, tt.to, 1))
			_, err := LoadHypotheses(p, spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestLockRefusesAnEditedFile(t *testing.T) {
	dir := t.TempDir()
	h := writeFile(t, dir, "h.yaml", tinyHypotheses)
	if _, err := CheckLock(h); !errors.Is(err, ErrLockMismatch) {
		t.Errorf("no lock yet: got %v, want ErrLockMismatch", err)
	}
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Preregister(h, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := CheckLock(h); err != nil || got.SHA256 != l.SHA256 || got.Design == nil || got.Design.Runs != 3 || len(got.Design.Cells) != 2 {
		t.Fatalf("unchanged file: %+v %v; want the design of 3 runs of 2 cells locked", got, err)
	}
	writeFile(t, dir, "h.yaml", strings.Replace(tinyHypotheses, "threshold: 6", "threshold: 7", 1))
	if _, err := CheckLock(h); !errors.Is(err, ErrLockMismatch) {
		t.Errorf("edited file: got %v, want ErrLockMismatch", err)
	}
}

// The committed experiment and hypotheses load, and the hypotheses still
// match their preregistration lock. A spec named "results/…" is the design
// a committed run used (replication.yaml has since gained cells).
func TestCommittedFilesAreValidAndLocked(t *testing.T) {
	for _, c := range []struct{ spec, hyp, rules string }{
		{"replication.yaml", "hypotheses.yaml", RulesRangeV1},
		{"results/replication-v2/results.json", "hypotheses-v2.yaml", RulesPairedV2},
		{"replication.yaml", "hypotheses-v3.yaml", RulesPairedV2},
		{"container.yaml", "container-hypotheses.yaml", RulesRangeV1},
		{"container.yaml", "container-hypotheses-v2.yaml", RulesPairedV2},
	} {
		var spec Spec
		var err error
		if strings.HasPrefix(c.spec, "results/") {
			var r *Results
			r, err = ReadResults(c.spec)
			if err == nil {
				spec = r.Experiment
			}
		} else {
			spec, err = LoadSpec(c.spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		hs, err := LoadHypotheses(c.hyp, spec)
		if err != nil {
			t.Fatal(err)
		}
		if hs[0].Rules != c.rules {
			t.Errorf("%s: rules %q, want %q", c.hyp, hs[0].Rules, c.rules)
		}
		l, err := CheckLock(c.hyp)
		if err != nil {
			t.Fatal(err)
		}
		// The paired-v2 hypotheses are locked with the committed design:
		// a full run of the committed file is not exploratory.
		if why := Exploratory(l, spec, c.rules); why != "" {
			t.Errorf("%s with %s: %s", c.hyp, c.spec, why)
		}
	}
}

func TestCellBound(t *testing.T) {
	cfg := config.Default()
	c4, _ := records.ParseStrategy("C4")
	b := CellBound(cfg, config.ProfileSlowWrite, c4, 32, 2*time.Second)
	if math.Abs(b.WriteCapacity-40) > 1e-9 || b.Limit != "writes" {
		t.Errorf("slow-write C4: %+v; want the 6 write permits / 150 ms = 40/s to bind", b)
	}
	b = CellBound(cfg, config.ProfileHealthy, c4, 32, 2*time.Second)
	// 24 permits / (3 × the log-normal mean, 120 ms × e^(0.3²/2) ≈ 125.5 ms).
	want := 24 / (3 * 0.120 * math.Exp(0.045))
	if b.Limit != "enrichment" || math.Abs(b.Bound-want)/want > 0.02 {
		t.Errorf("healthy C4: %+v; want enrichment bound ≈ %.1f", b, want)
	}
}

// The runner's metrics count runs by cell and status and pass the linter.
func TestRunnerMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewRunnerMetrics(reg)
	c := Cell{"C4", "slow-write", "cpus-1"}
	m.observe(RunRecord{Cell: c, Status: RunValid, Metrics: map[string]float64{"accepted_per_second": 35, "write_rejections": 0}})
	m.observe(RunRecord{Cell: c, Status: RunFailed, Reason: "crashed"})
	m.observe(RunRecord{Cell: c, Status: RunInvalid, Reason: "201 not stored", Metrics: map[string]float64{"accepted_per_second": 99}})
	want := `
# HELP loadlab_experiment_runs_total Client runs finished, by cell and status (valid, failed, contaminated or invalid).
# TYPE loadlab_experiment_runs_total counter
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="failed",strategy="C4"} 1
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="invalid",strategy="C4"} 1
loadlab_experiment_runs_total{cpu="cpus-1",scenario="slow-write",status="valid",strategy="C4"} 1
# HELP loadlab_experiment_last_accepted_per_lab_second Accepted records per lab second of the cell's last run.
# TYPE loadlab_experiment_last_accepted_per_lab_second gauge
loadlab_experiment_last_accepted_per_lab_second{cpu="cpus-1",scenario="slow-write",strategy="C4"} 35
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadlab_experiment_runs_total", "loadlab_experiment_last_accepted_per_lab_second"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
	var none *RunnerMetrics
	none.observe(RunRecord{Cell: c}) // a nil RunnerMetrics records nothing
}

// Under paired-v2 a comparison is judged on the ratios of runs with the
// same number, where the first rules took [min(A)/max(B), max(A)/min(B)];
// a cell short of valid runs is inconclusive; the bootstrap interval is
// the same on every call and holds the median.
func TestJudgePaired(t *testing.T) {
	a := Cell{"C4", "slow-write", "cpus-1"}
	b := Cell{"C3", "slow-write", "cpus-1"}
	// Run by run A is 1–3% above B, but B's runs vary more than that.
	all := append(runs(a, "accepted_per_second", 35.7, 36.9, 34.5, 36.2, 35.3), runs(b, "accepted_per_second", 35.0, 36.5, 34.0, 35.5, 34.6)...)
	h := Hypothesis{ID: "H10", Metric: "accepted_per_second", Cell: &a, Versus: &b, Compare: "ratio", Op: ">=", Threshold: Threshold{Value: 1}}
	v1 := Judge([]Hypothesis{h}, all, 5)[0]
	h.Rules = RulesPairedV2
	v2 := Judge([]Hypothesis{h}, all, 5)[0]
	if v1.Verdict != Inconclusive || v2.Verdict != Supported {
		t.Errorf("range rules %s %+v, paired %s %+v; want inconclusive, supported", v1.Verdict, v1.Cells[0], v2.Verdict, v2.Cells[0])
	}
	c := v2.Cells[0]
	ratio := func(x, y float64) float64 { return x / y } // in float64, as the judge divides
	if c.Min != ratio(36.9, 36.5) || c.Max != ratio(35.3, 34.6) || c.Runs != 5 || v2.ValidRuns["C4/slow-write/cpus-1"] != 5 || v2.ValidRuns["C3/slow-write/cpus-1"] != 5 {
		t.Errorf("paired ratios [%v, %v] over %d, valid runs %v; want [36.9/36.5, 35.3/34.6] over 5", c.Min, c.Max, c.Runs, v2.ValidRuns)
	}
	if bs := c.Bootstrap; bs == nil || !(bs.Lo <= c.Median && c.Median <= bs.Hi) || bs.Lo < c.Min || bs.Hi > c.Max ||
		*Judge([]Hypothesis{h}, all, 5)[0].Cells[0].Bootstrap != *bs {
		t.Errorf("bootstrap %+v around median %v in [%v, %v]: want a repeatable interval holding the median", bs, c.Median, c.Min, c.Max)
	}
	// Run 4 of B invalid: 4 of 5 valid runs.
	for i := range all {
		if all[i].Cell == b && all[i].Run == 4 {
			all[i].Status, all[i].Reason = RunInvalid, "201 not stored"
		}
	}
	v := Judge([]Hypothesis{h}, all, 5)[0]
	if v.Verdict != Inconclusive || v.Note != "insufficient runs (4 of 5) in C3/slow-write/cpus-1" || v.ValidRuns["C3/slow-write/cpus-1"] != 4 {
		t.Errorf("one invalid run: %s %q %v", v.Verdict, v.Note, v.ValidRuns)
	}
}

// A run of another design than the locked one is exploratory, says how,
// and its verdicts are not counted as findings.
func TestExploratoryDesign(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	d := DesignOf(spec)
	lock := Lock{Design: &d}
	if why := Exploratory(lock, spec, RulesPairedV2); why != "" {
		t.Errorf("the locked design: %q", why)
	}
	other := spec
	other.Runs, other.Records, other.Strategies = 4, 50, []string{"C4"}
	why := Exploratory(lock, other, RulesPairedV2)
	want := "not the preregistered design: runs 4, locked 3; records 50, locked 30; 1 cells, locked 2 (missing: C2/slow-write/cpus-1)"
	if why != want {
		t.Errorf("got %q\nwant %q", why, want)
	}
	// How the advised strategy is made is part of the design.
	advised, err := LoadSpec(writeFile(t, dir, "advised.yaml", advisedSpec))
	if err != nil {
		t.Fatal(err)
	}
	ad := DesignOf(advised)
	changed := advised
	a := *advised.Advise
	a.Step = 2 * time.Second
	changed.Advise = &a
	if Exploratory(Lock{Design: &ad}, advised, RulesPairedV2) != "" ||
		!strings.Contains(Exploratory(Lock{Design: &ad}, changed, RulesPairedV2), "the advise section") {
		t.Error("a changed advise section is not flagged")
	}
	if Exploratory(Lock{}, other, RulesRangeV1) != "" || !strings.Contains(Exploratory(Lock{}, spec, RulesPairedV2), "the lock records none") {
		t.Error("first rules: never exploratory; paired-v2 without a locked design: exploratory")
	}
	res := &Results{Experiment: other, Verdicts: label([]Verdict{{ID: "T1", Verdict: Refuted}}, why)}
	var md strings.Builder
	WriteMarkdown(&md, res)
	for _, s := range []string{"**Exploratory: " + why, "exploratory: **refuted**", "No findings: every verdict is exploratory"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, md.String())
		}
	}
	if strings.Contains(md.String(), "0 supported, 1 refuted, 0 inconclusive.\n") {
		t.Error("an exploratory refutation is counted as a finding")
	}
}

// A run's status follows from its raw data, in order: trouble in the
// client, earlier work at the reset, no quiet after the run, another seed,
// figures that do not reconcile.
func TestDeriveStatus(t *testing.T) {
	quiet := &Quiet{Quiet: true}
	busy := &Quiet{Busy: map[string]int{"records": 1}}
	good := func() RunRecord {
		return RunRecord{Seed: 3, Status: RunValid, QuietBefore: quiet, QuietAfter: quiet, Unknown: &Resolution{},
			Client: &records.Result{Records: 1, Complete: 1, WritesCreated: 1, CallsSent: map[string]int{"enrichment": 3, "records": 1}},
			Server: &api.Stats{Seed: 3, StoredWrites: 1, Stations: map[string]api.StationStats{
				"enrichment": {Requests: map[api.Outcome]float64{api.OutcomeServed: 3}},
				"records":    {Requests: map[api.Outcome]float64{api.OutcomeServed: 1}}}}}
	}
	for _, c := range []struct {
		name   string
		change func(*RunRecord)
		status string
		reason string
	}{
		{"clean", func(*RunRecord) {}, RunValid, ""},
		{"trouble", func(r *RunRecord) { r.Client.Errors = 1; r.QuietBefore = busy }, RunFailed, "the client exited 1: 0 records failed"},
		{"earlier work", func(r *RunRecord) { r.QuietBefore = busy; r.Server.Seed = 9 }, RunContaminated, "records 1 busy"},
		{"not quiet after", func(r *RunRecord) { r.QuietAfter = busy }, RunInvalid, "the server's counts are not final"},
		{"another seed", func(r *RunRecord) { r.Server.Seed = 1 }, RunInvalid, "drew from seed 1, not the run's 3"},
		{"not reconciled", func(r *RunRecord) { r.Server.StoredWrites = 0 }, RunInvalid, "writes stored: client 1"},
	} {
		r := good()
		c.change(&r)
		derive(&r, 1)
		if r.Status != c.status || !strings.Contains(r.Reason, c.reason) || r.Reconciliation == nil || r.Metrics == nil {
			t.Errorf("%s: %s %q; want %s with %q", c.name, r.Status, r.Reason, c.status, c.reason)
		}
	}
}
