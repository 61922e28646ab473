package judge

import (
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// gate makes every verdict inconclusive when the calibration found a bias
// beyond its limit that the user did not accept.
func gate(vs []resultsfile.Verdict, cal *resultsfile.Calibration) []resultsfile.Verdict {
	why := cal.Exceeded()
	if why == "" || cal.Accepted {
		return vs
	}
	out := make([]resultsfile.Verdict, len(vs))
	for i, v := range vs {
		v.Verdict, v.Note = resultsfile.Inconclusive, "inconclusive: "+why
		out[i] = v
	}
	return out
}

// Rejudge decides the verdicts of results from their runs' metrics, as the
// runner does: judged, gated by the calibration, labelled exploratory when
// the design is not the preregistered one.
func Rejudge(r *resultsfile.Results) []resultsfile.Verdict {
	rules := design.RulesRangeV1
	if len(r.Hypotheses) > 0 {
		rules = r.Hypotheses[0].Rules
	}
	vs := Verdicts(r.Hypotheses, r.Runs, r.Experiment.Runs)
	if r.TimeScaleBias != nil {
		vs = gateByCell(vs, r.Hypotheses, r.TimeScaleBias, r.Experiment, r.Runs)
	} else {
		vs = gate(vs, r.Calibration)
	}
	return label(vs, design.Exploratory(r.Lock, r.Experiment, rules))
}

// label marks every verdict exploratory with the reason why (none when
// why is empty).
func label(vs []resultsfile.Verdict, why string) []resultsfile.Verdict {
	if why == "" {
		return vs
	}
	out := make([]resultsfile.Verdict, len(vs))
	for i, v := range vs {
		v.Exploratory = why
		out[i] = v
	}
	return out
}
