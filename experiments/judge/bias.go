package judge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/loadlab/loadlab/experiments/design"
)

// Bias is an experiment's time-scale calibration, cell by cell: runs 1 to
// Pairs of every calibrated cell were run again at time scale 1 with the
// same seed (Twins, the raw data), and each cell's bias is the median of
// its pairs' rate ratios − 1, with the median's order-statistic interval
// (Measured, derived: loadlab check recomputes it). It gates only the
// verdicts whose metrics a time scale can bias, each by the cells it
// reads.
type Bias struct {
	TimeScale float64 `json:"time_scale"`
	Pairs     int     `json:"pairs"`
	MaxBias   float64 `json:"max_bias"`
	// Cells are the calibrated cells: the plan (design.CalibratedCells).
	Cells    []design.Cell `json:"cells,omitempty"`
	Twins    []RunRecord   `json:"twins,omitempty"`
	Measured []CellBias    `json:"measured,omitempty"`
	// Skipped says why nothing was calibrated, when nothing was asked: the
	// experiment runs at time scale 1 (nothing to calibrate), or with no
	// pairs (its time-biased verdicts are uncalibrated).
	Skipped string `json:"skipped,omitempty"`
	// Incomplete says why a calibration that was asked for did not
	// complete (a mock service that did not start, an interruption); the
	// verdicts it would have gated are provisional.
	Incomplete string `json:"incomplete,omitempty"`
	// Accepted: biases beyond the limit are judged anyway
	// (--accept-bias); AcceptedUncalibrated: verdicts without a measured
	// bias are final (--accept-uncalibrated). AcceptedBy says when the
	// acceptance came after the run (loadlab check).
	Accepted             bool   `json:"accepted,omitempty"`
	AcceptedUncalibrated bool   `json:"accepted_uncalibrated,omitempty"`
	AcceptedBy           string `json:"accepted_by,omitempty"`
}

// BiasState is what a cell's measured bias says against the limit.
type BiasState string

// Bias states, from the cell's interval: within the limit on both sides,
// beyond it on one, straddling it (unresolved), or not measured (no valid
// pair).
const (
	BiasWithin     BiasState = "within"
	BiasBeyond     BiasState = "beyond"
	BiasUnresolved BiasState = "unresolved"
	BiasUnmeasured BiasState = "unmeasured"
)

// CellBias is one calibrated cell's bias.
type CellBias struct {
	Cell design.Cell `json:"cell"`
	// Ratios are the valid pairs' accepted records per lab second at the
	// time scale ÷ at time scale 1, in run order.
	Ratios []float64 `json:"ratios"`
	// Bias is the median ratio − 1; Interval the median's interval − 1
	// (nil under 2 pairs).
	Bias     float64   `json:"bias"`
	Interval *Interval `json:"interval,omitempty"`
	State    BiasState `json:"state"`
}

// MeasureBias is each calibrated cell's bias from the matrix's runs and
// the twins at time scale 1, paired by run number: pure, so loadlab check
// recomputes it.
func MeasureBias(b *Bias, runs []RunRecord) []CellBias {
	var out []CellBias
	for _, c := range b.Cells {
		cb := CellBias{Cell: c, State: BiasUnmeasured}
		for run := 1; run <= b.Pairs; run++ {
			at, ok1 := pairRate(runs, c, run)
			one, ok2 := pairRate(b.Twins, c, run)
			if ok1 && ok2 && one > 0 {
				cb.Ratios = append(cb.Ratios, at/one)
			}
		}
		if len(cb.Ratios) > 0 {
			cb.Bias = Summarize(cb.Ratios).Median - 1
			cb.State = BiasUnresolved
			if iv := MedianInterval(cb.Ratios); iv != nil {
				cb.Interval = &Interval{Lo: iv.Lo - 1, Hi: iv.Hi - 1, Coverage: iv.Coverage}
				cb.State = stateOf(cb.Interval, b.MaxBias)
			}
		}
		out = append(out, cb)
	}
	return out
}

// pairRate is the accepted rate of run run of cell c, when it is valid.
func pairRate(runs []RunRecord, c design.Cell, run int) (float64, bool) {
	for _, r := range runs {
		if r.Cell == c && r.Run == run && r.Valid() {
			v, ok := r.Metrics["accepted_per_second"]
			return v, ok
		}
	}
	return 0, false
}

// stateOf is what an interval of the bias says against the limit.
func stateOf(iv *Interval, limit float64) BiasState {
	switch {
	case iv.Lo >= -limit && iv.Hi <= limit:
		return BiasWithin
	case iv.Lo > limit || iv.Hi < -limit:
		return BiasBeyond
	}
	return BiasUnresolved
}

// measured is cell c's measured bias, if c is calibrated.
func (b *Bias) measured(c design.Cell) (CellBias, bool) {
	i := slices.IndexFunc(b.Measured, func(m CellBias) bool { return m.Cell == c })
	if i < 0 {
		return CellBias{}, false
	}
	return b.Measured[i], true
}

// CalibrationLabel is what the calibration says of a verdict on a metric
// a time scale can bias ("" when its cells' biases are within the limit).
type CalibrationLabel string

// Calibration labels of a verdict (Verdict.Calibration).
const (
	// LabelUncalibrated: a cell it reads is not calibrated by the
	// experiment's plan (or the calibration was turned off).
	LabelUncalibrated CalibrationLabel = "uncalibrated"
	// LabelProvisional: a cell it reads should have been calibrated and
	// was not, or its bias interval straddles the limit: the verdict is
	// not final (the command exits 1).
	LabelProvisional CalibrationLabel = "provisional"
	// LabelBeyond: a cell it reads has a bias beyond the limit: the
	// verdict is inconclusive.
	LabelBeyond CalibrationLabel = "bias beyond the limit"
	// LabelBiasAccepted: judged over a bias beyond the limit, accepted.
	LabelBiasAccepted CalibrationLabel = "bias accepted"
	// LabelUncalibratedAccepted: provisional, accepted as final.
	LabelUncalibratedAccepted CalibrationLabel = "uncalibrated, accepted"
	// LabelHolds: a cell it reads has a bias beyond the limit or
	// unresolved, and the verdict is the same at every bias its cells'
	// pairs allow: final.
	LabelHolds CalibrationLabel = "holds across the bias"
)

// gateByCell judges the calibration of each time-biased verdict by the
// cells it reads: when one is beyond the limit or unresolved, the verdict
// stands only if it holds across the bias its cells' pairs allow
// (holdsAcross); else, beyond the limit, it is inconclusive (unless
// accepted), and unresolved, or unmeasured though planned, provisional
// (unless accepted); a cell not planned labels it uncalibrated. Other
// verdicts pass unchanged, and so does every verdict at time scale 1; a
// cell that runs in real time (spec) has no bias.
func gateByCell(vs []Verdict, hs []design.Hypothesis, b *Bias, spec design.Spec, runs []RunRecord) []Verdict {
	if b == nil || b.TimeScale == 1 {
		return vs
	}
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		h := hs[slices.IndexFunc(hs, func(h design.Hypothesis) bool { return h.ID == v.ID })]
		if h.TimeBiased() {
			v = b.gateOne(v, h, spec, runs)
		}
		out[i] = v
	}
	return out
}

// gateOne gates one time-biased verdict, v of h.
func (b *Bias) gateOne(v Verdict, h design.Hypothesis, spec design.Spec, runs []RunRecord) Verdict {
	var beyond, unsure, unplanned, unmeasured []string
	for _, c := range append(h.AllCells(), h.VersusCells()...) {
		if spec.InRealTime(c) {
			continue // at time scale 1: no bias
		}
		m, planned := b.measured(c)
		switch {
		case !planned || b.Skipped != "":
			unplanned = append(unplanned, c.String())
		case m.State == BiasBeyond:
			beyond = append(beyond, fmt.Sprintf("%s %s", c, m.describe()))
		case m.State == BiasUnresolved:
			unsure = append(unsure, fmt.Sprintf("%s %s straddles ±%.1f%%", c, m.describe(), 100*b.MaxBias))
		case m.State == BiasUnmeasured:
			unmeasured = append(unmeasured, fmt.Sprintf("%s not measured%s", c, b.incompleteWhy()))
		}
	}
	if len(beyond)+len(unsure) > 0 && len(unplanned)+len(unmeasured) == 0 {
		if ok, ranges := b.holdsAcross(v, h, runs); ok {
			v.Calibration = LabelHolds
			v.Note = "holds across the time-scale bias: brought back to time scale 1 by every ratio its pairs' intervals allow, " + ranges
			return v
		}
	}
	unsure = append(unsure, unmeasured...)
	switch {
	case len(beyond) > 0 && !b.Accepted:
		v.Verdict, v.Calibration = Inconclusive, LabelBeyond
		v.Note = fmt.Sprintf("inconclusive: time-scale bias beyond ±%.1f%%: %s", 100*b.MaxBias, beyond[0])
	case len(beyond) > 0:
		v.Calibration = LabelBiasAccepted
	case len(unsure) > 0 && b.AcceptedUncalibrated:
		v.Calibration = LabelUncalibratedAccepted
	case len(unsure) > 0:
		v.Calibration = LabelProvisional
		v.Note = "provisional: time-scale bias of " + unsure[0]
	case len(unplanned) > 0:
		v.Calibration = LabelUncalibrated
	}
	return v
}

// describe is the bias and its interval in percent.
func (m CellBias) describe() string {
	if m.Interval == nil {
		return fmt.Sprintf("%+.1f%% (%d pair)", 100*m.Bias, len(m.Ratios))
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%] (%d pairs, %.1f%% coverage)", 100*m.Bias,
		100*m.Interval.Lo, 100*m.Interval.Hi, len(m.Ratios), 100*m.Interval.Coverage)
}

// incompleteWhy is ": why" when the calibration did not complete.
func (b *Bias) incompleteWhy() string {
	if b.Incomplete == "" {
		return ""
	}
	return ": " + b.Incomplete
}

// Provisional counts the verdicts the calibration left provisional.
func Provisional(vs []Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Calibration == LabelProvisional {
			n++
		}
	}
	return n
}

// Worst is the calibrated cell whose bias is largest in size, and
// whether there is one.
func (b *Bias) Worst() (CellBias, bool) {
	var worst CellBias
	found := false
	for _, m := range b.Measured {
		if len(m.Ratios) > 0 && (!found || math.Abs(m.Bias) > math.Abs(worst.Bias)) {
			worst, found = m, true
		}
	}
	return worst, found
}

// GatedByBias counts the verdicts made inconclusive by a time-scale bias
// beyond the limit.
func GatedByBias(vs []Verdict) int {
	n := 0
	for _, v := range vs {
		if v.Calibration == LabelBeyond {
			n++
		}
	}
	return n
}

// Accept judges results again accepting, after the run, a time-scale
// bias beyond the limit (bias) and/or the verdicts the calibration left
// provisional (uncalibrated), recording by whom: the runs are not touched.
// Results with no calibration to accept are an error.
func Accept(r *Results, bias, uncalibrated bool, by string) error {
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
