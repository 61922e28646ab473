package judge

import (
	"math"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

func TestDecide(t *testing.T) {
	num := func(x float64) design.Threshold { return design.Threshold{Value: x} }
	tests := []struct {
		op     design.Op
		t      design.Threshold
		lo, hi float64
		want   resultsfile.Decision
	}{
		{"==", num(0), 0, 0, resultsfile.Supported},
		{"==", num(0), 1, 3, resultsfile.Refuted},
		{"==", num(2), 1, 3, resultsfile.Inconclusive},
		{"!=", num(0), 1, 3, resultsfile.Supported},
		{"<=", num(6), 4, 6, resultsfile.Supported},
		{"<=", num(6), 7, 9, resultsfile.Refuted},
		{"<=", num(6), 5, 7, resultsfile.Inconclusive},
		{"<", num(6), 4, 6, resultsfile.Inconclusive},
		{">", num(0), 1, 5, resultsfile.Supported},
		{">", num(0), 0, 0, resultsfile.Refuted},
		{">=", num(1), 0.95, 1.05, resultsfile.Inconclusive},
		{"between", design.Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.85, 0.9, resultsfile.Supported},
		{"between", design.Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.93, 0.99, resultsfile.Refuted},
		{"between", design.Threshold{Lo: 0.8, Hi: 0.92, Range: true}, 0.75, 0.85, resultsfile.Inconclusive},
		{">", num(0), math.NaN(), math.NaN(), resultsfile.Inconclusive},
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

func runs(c design.Cell, metric string, vals ...float64) []resultsfile.RunRecord {
	var out []resultsfile.RunRecord
	for i, v := range vals {
		out = append(out, resultsfile.RunRecord{Cell: c, Run: i + 1, Status: resultsfile.RunValid, Mechanism: "cgroup v1 x", MechanismKind: cpulimit.Cgroup, Metrics: map[string]float64{metric: v, "gomaxprocs": 2}})
	}
	return out
}

func TestJudgeOnFixedInputs(t *testing.T) {
	a := design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}
	b := design.Cell{Strategy: "C3", Scenario: "slow-write", CPU: "cpus-1"}
	all := append(runs(a, "accepted_per_second", 35, 36, 34), runs(b, "accepted_per_second", 30, 31, 32)...)
	all = append(all, runs(design.Cell{Strategy: "C2", Scenario: "slow-write", CPU: "cpus-1"}, "accepted_per_second", 10, 40)...)
	all = append(all, resultsfile.RunRecord{Cell: a, Run: 4, Status: resultsfile.RunFailed, Reason: "client crashed"}) // ignored
	hs := []design.Hypothesis{
		{ID: "ratio", Metric: "accepted_per_second", Cell: &a, Versus: &b, Compare: "ratio", Op: ">=", Threshold: design.Threshold{Value: 1}},
		{ID: "refuted", Metric: "accepted_per_second", Cell: &a, Op: "<", Threshold: design.Threshold{Value: 20}},
		{ID: "straddle", Metric: "accepted_per_second", Cells: []design.Cell{{Strategy: "C2", Scenario: "slow-write", CPU: "cpus-1"}}, Op: ">", Threshold: design.Threshold{Value: 20}},
		{ID: "minus", Metric: "accepted_per_second", Minus: "gomaxprocs", Cell: &b, Op: "between", Threshold: design.Threshold{Lo: 28, Hi: 30, Range: true}},
		{ID: "mechanism", Metric: "gomaxprocs", Cell: &a, RequiresMechanism: "affinity", Op: "==", Threshold: design.Threshold{Value: 2}},
		{ID: "missing", Metric: "accepted_per_second", Cell: &design.Cell{Strategy: "C1", Scenario: "healthy", CPU: "cpus-1"}, Op: ">", Threshold: design.Threshold{Value: 0}},
	}
	want := map[string]resultsfile.Decision{"ratio": resultsfile.Supported, "refuted": resultsfile.Refuted, "straddle": resultsfile.Inconclusive, "minus": resultsfile.Supported,
		"mechanism": resultsfile.Inconclusive, "missing": resultsfile.Inconclusive}
	for _, v := range Verdicts(hs, all, 3) {
		if v.Verdict != want[v.ID] {
			t.Errorf("%s: %s (%+v), want %s", v.ID, v.Verdict, v.Cells, want[v.ID])
		}
	}
	v := Verdicts(hs[:1], all, 3)[0].Cells[0]
	if v.Min != 34.0/32 || v.Max != 36.0/30 || v.Runs != 3 {
		t.Errorf("ratio range [%v, %v] over %d runs; want [34/32, 36/30] over 3", v.Min, v.Max, v.Runs)
	}
}

// Under paired-v2 a comparison is judged on the ratios of runs with the
// same number, where the first rules took [min(A)/max(B), max(A)/min(B)];
// a cell short of valid runs is inconclusive; the bootstrap interval is
// the same on every call and holds the median.
func TestJudgePaired(t *testing.T) {
	a := design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}
	b := design.Cell{Strategy: "C3", Scenario: "slow-write", CPU: "cpus-1"}
	// Run by run A is 1–3% above B, but B's runs vary more than that.
	all := append(runs(a, "accepted_per_second", 35.7, 36.9, 34.5, 36.2, 35.3), runs(b, "accepted_per_second", 35.0, 36.5, 34.0, 35.5, 34.6)...)
	h := design.Hypothesis{ID: "H10", Metric: "accepted_per_second", Cell: &a, Versus: &b, Compare: "ratio", Op: ">=", Threshold: design.Threshold{Value: 1}}
	v1 := Verdicts([]design.Hypothesis{h}, all, 5)[0]
	h.Rules = design.RulesPairedV2
	v2 := Verdicts([]design.Hypothesis{h}, all, 5)[0]
	if v1.Verdict != resultsfile.Inconclusive || v2.Verdict != resultsfile.Supported {
		t.Errorf("range rules %s %+v, paired %s %+v; want inconclusive, supported", v1.Verdict, v1.Cells[0], v2.Verdict, v2.Cells[0])
	}
	c := v2.Cells[0]
	ratio := func(x, y float64) float64 { return x / y } // in float64, as the judge divides
	if c.Min != ratio(36.9, 36.5) || c.Max != ratio(35.3, 34.6) || c.Runs != 5 || v2.ValidRuns["C4/slow-write/cpus-1"] != 5 || v2.ValidRuns["C3/slow-write/cpus-1"] != 5 {
		t.Errorf("paired ratios [%v, %v] over %d, valid runs %v; want [36.9/36.5, 35.3/34.6] over 5", c.Min, c.Max, c.Runs, v2.ValidRuns)
	}
	if bs := c.Bootstrap; bs == nil || !(bs.Lo <= c.Median && c.Median <= bs.Hi) || bs.Lo < c.Min || bs.Hi > c.Max ||
		*Verdicts([]design.Hypothesis{h}, all, 5)[0].Cells[0].Bootstrap != *bs {
		t.Errorf("bootstrap %+v around median %v in [%v, %v]: want a repeatable interval holding the median", bs, c.Median, c.Min, c.Max)
	}
	// Run 4 of B invalid: 4 of 5 valid runs.
	for i := range all {
		if all[i].Cell == b && all[i].Run == 4 {
			all[i].Status, all[i].Reason = resultsfile.RunInvalid, "201 not stored"
		}
	}
	v := Verdicts([]design.Hypothesis{h}, all, 5)[0]
	if v.Verdict != resultsfile.Inconclusive || v.Note != "insufficient runs (4 of 5) in C3/slow-write/cpus-1" || v.ValidRuns["C3/slow-write/cpus-1"] != 4 {
		t.Errorf("one invalid run: %s %q %v", v.Verdict, v.Note, v.ValidRuns)
	}
}

// A run's status follows from its raw data, in order: trouble in the
// client, earlier work at the reset, no quiet after the run, another seed,
// figures that do not reconcile.
func TestDeriveStatus(t *testing.T) {
	quiet := &resultsfile.Quiet{Quiet: true}
	busy := &resultsfile.Quiet{Busy: map[string]int{"records": 1}}
	good := func() resultsfile.RunRecord {
		return resultsfile.RunRecord{Seed: 3, Status: resultsfile.RunValid, QuietBefore: quiet, QuietAfter: quiet, Unknown: &resultsfile.Resolution{},
			Client: &records.Result{Records: 1, Complete: 1, WritesCreated: 1, CallsSent: map[string]int{"enrichment": 3, "records": 1}},
			Server: &api.Stats{Seed: 3, StoredWrites: 1, Stations: map[string]api.StationStats{
				"enrichment": {Requests: map[api.Outcome]float64{api.OutcomeServed: 3}},
				"records":    {Requests: map[api.Outcome]float64{api.OutcomeServed: 1}}}}}
	}
	for _, c := range []struct {
		name   string
		change func(*resultsfile.RunRecord)
		status resultsfile.RunStatus
		reason string
	}{
		{"clean", func(*resultsfile.RunRecord) {}, resultsfile.RunValid, ""},
		{"trouble", func(r *resultsfile.RunRecord) { r.Client.Errors = 1; r.QuietBefore = busy }, resultsfile.RunFailed, "the client exited 1: 0 records failed"},
		{"earlier work", func(r *resultsfile.RunRecord) { r.QuietBefore = busy; r.Server.Seed = 9 }, resultsfile.RunContaminated, "records 1 busy"},
		{"not quiet after", func(r *resultsfile.RunRecord) { r.QuietAfter = busy }, resultsfile.RunInvalid, "the server's counts are not final"},
		{"another seed", func(r *resultsfile.RunRecord) { r.Server.Seed = 1 }, resultsfile.RunInvalid, "drew from seed 1, not the run's 3"},
		{"not reconciled", func(r *resultsfile.RunRecord) { r.Server.StoredWrites = 0 }, resultsfile.RunInvalid, "writes stored: client 1"},
	} {
		r := good()
		c.change(&r)
		Derive(&r, 1)
		if r.Status != c.status || !strings.Contains(r.Reason, c.reason) || r.Reconciliation == nil || r.Metrics == nil {
			t.Errorf("%s: %s %q; want %s with %q", c.name, r.Status, r.Reason, c.status, c.reason)
		}
	}
}

func TestGateMakesVerdictsInconclusiveBeyondTheLimit(t *testing.T) {
	vs := []resultsfile.Verdict{{ID: "a", Verdict: resultsfile.Supported}, {ID: "b", Verdict: resultsfile.Refuted}}
	within := &resultsfile.Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []resultsfile.StrategyBias{{Strategy: "C2", Bias: -0.01}, {Strategy: "C4", Bias: 0.015}}}
	beyond := &resultsfile.Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []resultsfile.StrategyBias{{Strategy: "C2", Bias: -0.01}, {Strategy: "C4", Bias: -0.05}}}
	accepted := *beyond
	accepted.Accepted = true
	unmeasured := &resultsfile.Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []resultsfile.StrategyBias{{Strategy: "C2", Bias: math.NaN()}}}
	for _, tt := range []struct {
		name   string
		cal    *resultsfile.Calibration
		judged bool
	}{
		{"within", within, true}, {"beyond", beyond, false}, {"accepted", &accepted, true},
		{"unmeasured strategy", unmeasured, false}, {"skipped", &resultsfile.Calibration{Skipped: "time scale 1"}, true}, {"none", nil, true},
	} {
		got := gate(vs, tt.cal)
		for i, v := range got {
			if tt.judged && v.Verdict != vs[i].Verdict || !tt.judged && (v.Verdict != resultsfile.Inconclusive || !strings.Contains(v.Note, "time-scale bias")) {
				t.Errorf("%s: %s is %s (%s)", tt.name, v.ID, v.Verdict, v.Note)
			}
		}
	}
	if why := beyond.Exceeded(); !strings.Contains(why, "-5.0% for C4") {
		t.Errorf("exceeded: %q", why)
	}
}

// Rejudge labels every verdict of a run of another design than the
// locked one exploratory, with the reason, and leaves the locked design's
// verdicts unlabelled.
func TestRejudgeLabelsExploratoryVerdicts(t *testing.T) {
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	d := design.DesignOf(spec)
	c := design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}
	h := design.Hypothesis{ID: "T1", Metric: "write_rejections", Cell: &c, Op: design.Equal, Rules: design.RulesPairedV2}
	res := &resultsfile.Results{Experiment: spec, Hypotheses: []design.Hypothesis{h}, Lock: design.Lock{Design: &d},
		Runs: runs(c, "write_rejections", 0, 0, 0)}
	if v := Rejudge(res); v[0].Exploratory != "" || v[0].Verdict != resultsfile.Supported {
		t.Errorf("the locked design: %+v", v[0])
	}
	res.Experiment.Records = 50
	if v := Rejudge(res); v[0].Exploratory != "not the preregistered design: records 50, locked 30" || v[0].Verdict != resultsfile.Supported {
		t.Errorf("another design: %+v", v[0])
	}
}
