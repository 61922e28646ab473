package judge

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// twinsOf are runs of cell c at time scale 1 whose accepted rates are
// the matrix's divided by ratios, run by run.
func twinsOf(c design.Cell, at []float64, ratios ...float64) []resultsfile.RunRecord {
	var one []float64
	for i, r := range ratios {
		one = append(one, at[i]/r)
	}
	return runs(c, "accepted_per_second", one...)
}

// The gate reads each cell's bias interval: within the limit, a verdict
// stands; beyond it or unresolved, it stands only when it is the same at
// every bias the pairs allow, else it is inconclusive or provisional; a
// cell that should have been measured and was not, or a difference, makes
// it provisional; a cell outside the plan labels it uncalibrated.
func TestGateByCellHoldsOnlyWhatNoBiasCanChange(t *testing.T) {
	a := design.Cell{Strategy: "C4", Scenario: "healthy", CPU: "cpus-1"}
	b := design.Cell{Strategy: "C3", Scenario: "healthy", CPU: "cpus-1"}
	c := design.Cell{Strategy: "C2", Scenario: "healthy", CPU: "cpus-1"}
	atA, atB, atC := []float64{60, 61, 59, 60, 62}, []float64{70, 71, 69, 70, 72}, []float64{80, 81, 79, 80, 82}
	all := append(append(runs(a, "accepted_per_second", atA...), runs(b, "accepted_per_second", atB...)...), runs(c, "accepted_per_second", atC...)...)
	hyp := func(id string, cell design.Cell, versus *design.Cell, op design.Op, th design.Threshold) design.Hypothesis {
		h := design.Hypothesis{ID: id, Metric: "accepted_per_second", Cell: &cell, Versus: versus, Op: op, Threshold: th, Rules: design.RulesPairedV3}
		if versus != nil {
			h.Compare = design.Ratio
		}
		return h
	}
	between := func(lo, hi float64) design.Threshold { return design.Threshold{Lo: lo, Hi: hi, Range: true} }
	hs := []design.Hypothesis{
		// A/B is 0.855–0.861 run by run: far from 0.5 and 1, near 0.84 and 0.87.
		hyp("robust", a, &b, design.Between, between(0.5, 1)),
		hyp("fragile", a, &b, design.Between, between(0.84, 0.87)),
		hyp("rate", a, nil, design.Greater, design.Threshold{Value: 30}),
		hyp("within", b, nil, design.Greater, design.Threshold{Value: 60}),
		hyp("unplanned", c, nil, design.Greater, design.Threshold{Value: 30}),
		{ID: "difference", Metric: "accepted_per_second", Cell: &a, Versus: &b, Compare: design.Difference, Op: design.Less,
			Threshold: design.Threshold{Value: 0}, Rules: design.RulesPairedV3},
	}
	verdicts := func(ratiosA []float64) map[string]resultsfile.Verdict {
		bias := &resultsfile.Bias{TimeScale: 0.5, Pairs: 5, MaxBias: 0.02, Cells: []design.Cell{a, b},
			Twins: append(twinsOf(a, atA, ratiosA...), twinsOf(b, atB, 0.99, 0.995, 0.99, 0.985, 0.99)...)}
		bias.Measured = MeasureBias(bias, all)
		out := map[string]resultsfile.Verdict{}
		for _, v := range gateByCell(Verdicts(hs, all, 5), hs, bias, design.Spec{TimeScale: 0.5}, all) {
			out[v.ID] = v
		}
		return out
	}
	type want struct {
		verdict resultsfile.Decision
		label   resultsfile.CalibrationLabel
	}
	for name, tc := range map[string]struct {
		ratiosA []float64
		want    map[string]want
	}{
		"A unresolved": {[]float64{0.97, 0.99, 0.95, 1.01, 0.98}, map[string]want{
			"robust": {resultsfile.Supported, resultsfile.LabelHolds}, "fragile": {resultsfile.Supported, resultsfile.LabelProvisional}, "rate": {resultsfile.Supported, resultsfile.LabelHolds},
			"within": {resultsfile.Supported, ""}, "unplanned": {resultsfile.Supported, resultsfile.LabelUncalibrated}, "difference": {resultsfile.Supported, resultsfile.LabelProvisional}}},
		"A beyond": {[]float64{0.95, 0.94, 0.93, 0.95, 0.96}, map[string]want{
			"robust": {resultsfile.Supported, resultsfile.LabelHolds}, "fragile": {resultsfile.Inconclusive, resultsfile.LabelBeyond}, "rate": {resultsfile.Supported, resultsfile.LabelHolds},
			"within": {resultsfile.Supported, ""}, "difference": {resultsfile.Inconclusive, resultsfile.LabelBeyond}}},
		"A within": {[]float64{0.99, 0.995, 0.985, 0.99, 0.99}, map[string]want{
			"robust": {resultsfile.Supported, ""}, "fragile": {resultsfile.Supported, ""}, "rate": {resultsfile.Supported, ""}, "difference": {resultsfile.Supported, ""}}},
	} {
		got := verdicts(tc.ratiosA)
		for id, w := range tc.want {
			if v := got[id]; v.Verdict != w.verdict || v.Calibration != w.label {
				t.Errorf("%s: %s is %s, %q (%s); want %s, %q", name, id, v.Verdict, v.Calibration, v.Note, w.verdict, w.label)
			}
		}
	}
	if v := verdicts([]float64{0.97, 0.99, 0.95, 1.01, 0.98})["robust"]; !strings.Contains(v.Note, "C4/healthy/cpus-1 [") {
		t.Errorf("a verdict that holds says across what: %q", v.Note)
	}
	// Twins lost: every verdict the calibration would have gated is
	// provisional, however robust.
	bias := &resultsfile.Bias{TimeScale: 0.5, Pairs: 5, MaxBias: 0.02, Cells: []design.Cell{a, b}, Incomplete: "interrupted"}
	bias.Measured = MeasureBias(bias, all)
	for _, v := range gateByCell(Verdicts(hs[:3], all, 5), hs[:3], bias, design.Spec{TimeScale: 0.5}, all) {
		if v.Calibration != resultsfile.LabelProvisional {
			t.Errorf("no twins: %s is %q (%s), want provisional", v.ID, v.Calibration, v.Note)
		}
	}
}
