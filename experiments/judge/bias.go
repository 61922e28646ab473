package judge

import (
	"errors"
	"fmt"
	"slices"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// MeasureBias is each calibrated cell's bias from the matrix's runs and
// the twins at time scale 1, paired by run number: pure, so loadlab check
// recomputes it.
func MeasureBias(b *resultsfile.Bias, runs []resultsfile.RunRecord) []resultsfile.CellBias {
	var out []resultsfile.CellBias
	for _, c := range b.Cells {
		cb := resultsfile.CellBias{Cell: c, State: resultsfile.BiasUnmeasured}
		for run := 1; run <= b.Pairs; run++ {
			at, ok1 := pairRate(runs, c, run)
			one, ok2 := pairRate(b.Twins, c, run)
			if ok1 && ok2 && one > 0 {
				cb.Ratios = append(cb.Ratios, at/one)
			}
		}
		if len(cb.Ratios) > 0 {
			cb.Bias = Summarize(cb.Ratios).Median - 1
			cb.State = resultsfile.BiasUnresolved
			if iv := MedianInterval(cb.Ratios); iv != nil {
				cb.Interval = &resultsfile.Interval{Lo: iv.Lo - 1, Hi: iv.Hi - 1, Coverage: iv.Coverage}
				cb.State = stateOf(cb.Interval, b.MaxBias)
			}
		}
		out = append(out, cb)
	}
	return out
}

// pairRate is the accepted rate of run run of cell c, when it is valid.
func pairRate(runs []resultsfile.RunRecord, c design.Cell, run int) (float64, bool) {
	for _, r := range runs {
		if r.Cell == c && r.Run == run && r.Valid() {
			v, ok := r.Metrics["accepted_per_second"]
			return v, ok
		}
	}
	return 0, false
}

// stateOf is what an interval of the bias says against the limit.
func stateOf(iv *resultsfile.Interval, limit float64) resultsfile.BiasState {
	switch {
	case iv.Lo >= -limit && iv.Hi <= limit:
		return resultsfile.BiasWithin
	case iv.Lo > limit || iv.Hi < -limit:
		return resultsfile.BiasBeyond
	}
	return resultsfile.BiasUnresolved
}

// measuredBias is cell c's measured bias, if c is calibrated.
func measuredBias(b *resultsfile.Bias, c design.Cell) (resultsfile.CellBias, bool) {
	i := slices.IndexFunc(b.Measured, func(m resultsfile.CellBias) bool { return m.Cell == c })
	if i < 0 {
		return resultsfile.CellBias{}, false
	}
	return b.Measured[i], true
}

// gateByCell judges the calibration of each time-biased verdict by the
// cells it reads: when one is beyond the limit or unresolved, the verdict
// stands only if it holds across the bias its cells' pairs allow
// (holdsAcross); else, beyond the limit, it is inconclusive (unless
// accepted), and unresolved, or unmeasured though planned, provisional
// (unless accepted); a cell not planned labels it uncalibrated. Other
// verdicts pass unchanged, and so does every verdict at time scale 1; a
// cell that runs in real time (spec) has no bias.
func gateByCell(vs []resultsfile.Verdict, hs []design.Hypothesis, b *resultsfile.Bias, spec design.Spec, runs []resultsfile.RunRecord) []resultsfile.Verdict {
	if b == nil || b.TimeScale == 1 {
		return vs
	}
	out := make([]resultsfile.Verdict, len(vs))
	for i, v := range vs {
		h := hs[slices.IndexFunc(hs, func(h design.Hypothesis) bool { return h.ID == v.ID })]
		if h.TimeBiased() {
			v = gateOne(b, v, h, spec, runs)
		}
		out[i] = v
	}
	return out
}

// gateOne gates one time-biased verdict, v of h.
func gateOne(b *resultsfile.Bias, v resultsfile.Verdict, h design.Hypothesis, spec design.Spec, runs []resultsfile.RunRecord) resultsfile.Verdict {
	var beyond, unsure, unplanned, unmeasured []string
	for _, c := range append(h.AllCells(), h.VersusCells()...) {
		if spec.InRealTime(c) {
			continue // at time scale 1: no bias
		}
		m, planned := measuredBias(b, c)
		switch {
		case !planned || b.Skipped != "":
			unplanned = append(unplanned, c.String())
		case m.State == resultsfile.BiasBeyond:
			beyond = append(beyond, fmt.Sprintf("%s %s", c, describeBias(m)))
		case m.State == resultsfile.BiasUnresolved:
			unsure = append(unsure, fmt.Sprintf("%s %s straddles ±%.1f%%", c, describeBias(m), 100*b.MaxBias))
		case m.State == resultsfile.BiasUnmeasured:
			unmeasured = append(unmeasured, fmt.Sprintf("%s not measured%s", c, incompleteWhy(b)))
		}
	}
	if len(beyond)+len(unsure) > 0 && len(unplanned)+len(unmeasured) == 0 {
		if ok, ranges := holdsAcross(b, v, h, runs); ok {
			v.Calibration = resultsfile.LabelHolds
			v.Note = "holds across the time-scale bias: brought back to time scale 1 by every ratio its pairs' intervals allow, " + ranges
			return v
		}
	}
	unsure = append(unsure, unmeasured...)
	switch {
	case len(beyond) > 0 && !b.Accepted:
		v.Verdict, v.Calibration = resultsfile.Inconclusive, resultsfile.LabelBeyond
		v.Note = fmt.Sprintf("inconclusive: time-scale bias beyond ±%.1f%%: %s", 100*b.MaxBias, beyond[0])
	case len(beyond) > 0:
		v.Calibration = resultsfile.LabelBiasAccepted
	case len(unsure) > 0 && b.AcceptedUncalibrated:
		v.Calibration = resultsfile.LabelUncalibratedAccepted
	case len(unsure) > 0:
		v.Calibration = resultsfile.LabelProvisional
		v.Note = "provisional: time-scale bias of " + unsure[0]
	case len(unplanned) > 0:
		v.Calibration = resultsfile.LabelUncalibrated
	}
	return v
}

// describeBias is the bias and its interval in percent.
func describeBias(m resultsfile.CellBias) string {
	if m.Interval == nil {
		return fmt.Sprintf("%+.1f%% (%d pair)", 100*m.Bias, len(m.Ratios))
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%] (%d pairs, %.1f%% coverage)", 100*m.Bias,
		100*m.Interval.Lo, 100*m.Interval.Hi, len(m.Ratios), 100*m.Interval.Coverage)
}

// incompleteWhy is ": why" when the calibration did not complete.
func incompleteWhy(b *resultsfile.Bias) string {
	if b.Incomplete == "" {
		return ""
	}
	return ": " + b.Incomplete
}

// Provisional counts the verdicts the calibration left provisional.
func Provisional(vs []resultsfile.Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Calibration == resultsfile.LabelProvisional {
			n++
		}
	}
	return n
}

// GatedByBias counts the verdicts made inconclusive by a time-scale bias
// beyond the limit.
func GatedByBias(vs []resultsfile.Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Calibration == resultsfile.LabelBeyond {
			n++
		}
	}
	return n
}

// Accept judges results again accepting, after the run, a time-scale
// bias beyond the limit (bias) and/or the verdicts the calibration left
// provisional (uncalibrated), recording by whom: the runs are not touched.
// Results with no calibration to accept are an error.
func Accept(r *resultsfile.Results, bias, uncalibrated bool, by string) error {
	switch {
	case r.TimeScaleBias != nil:
		b := *r.TimeScaleBias
		b.Accepted = b.Accepted || bias
		b.AcceptedUncalibrated = b.AcceptedUncalibrated || uncalibrated
		b.AcceptedBy = by
		r.TimeScaleBias = &b
	case r.Calibration != nil && bias && !uncalibrated:
		c := *r.Calibration
		c.Accepted, c.AcceptedBy = true, by
		r.Calibration = &c
	default:
		return errors.New("these results keep no calibration that this acceptance could change")
	}
	r.Verdicts = Rejudge(r)
	return nil
}
