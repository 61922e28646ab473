package judge

import (
	"fmt"
	"math"

	"github.com/loadlab/loadlab/experiments/design"
)

// Decision is what a hypothesis, or one of its cells, was judged.
type Decision string

// Decisions.
const (
	Supported    Decision = "supported"
	Refuted      Decision = "refuted"
	Inconclusive Decision = "inconclusive"
)

// Verdict is a hypothesis judged against the runs.
type Verdict struct {
	ID        string           `json:"id"`
	Claim     string           `json:"claim"`
	Verdict   Decision         `json:"verdict"`
	Op        design.Op        `json:"op"`
	Threshold design.Threshold `json:"threshold"`
	Rules     design.Rules     `json:"rules,omitempty"`
	Cells     []CellVerdict    `json:"cells"`
	Note      string           `json:"note,omitempty"`
	// ValidRuns is, per cell the verdict reads (by its name), how many of
	// its runs were valid (paired-v2 rules).
	ValidRuns map[string]int `json:"valid_runs,omitempty"`
	// Exploratory, when set, says how the run differs from the design the
	// hypotheses were preregistered with: the verdict is computed but is
	// not a finding.
	Exploratory string `json:"exploratory,omitempty"`
	// Calibration labels a verdict whose metric a time scale can bias by
	// what the calibration said of the cells it reads: "" (within the
	// limit, or nothing to calibrate), LabelUncalibrated,
	// LabelProvisional, LabelBeyond, LabelHolds, LabelBiasAccepted or
	// LabelUncalibratedAccepted.
	Calibration CalibrationLabel `json:"calibration,omitempty"`
}

// CellVerdict is the judgement in one cell: the value's median and range
// (under paired rules with a versus cell, of the paired per-run ratios or
// differences), and an interval of the median (information, not the
// verdict rule): paired-v2's 95% bootstrap, paired-v3's order-statistic
// interval with its coverage.
type CellVerdict struct {
	Cell      design.Cell `json:"cell"`
	Median    float64     `json:"median"`
	Min       float64     `json:"min"`
	Max       float64     `json:"max"`
	Runs      int         `json:"runs"`
	Bootstrap *Bootstrap  `json:"bootstrap,omitempty"`
	// Interval (paired-v3 rules) is the median's distribution-free
	// order-statistic interval, with its coverage.
	Interval *Interval `json:"interval,omitempty"`
	Verdict  Decision  `json:"verdict"`
	Note     string    `json:"note,omitempty"`
}

// Verdicts decides every hypothesis from the runs; want is the runs per
// cell the experiment asked for. A cell without valid runs, or whose CPU
// mechanism is not the one required, is inconclusive; under paired-v2
// rules so is one with fewer valid runs than asked.
func Verdicts(hs []design.Hypothesis, runs []RunRecord, want int) []Verdict {
	var out []Verdict
	for _, h := range hs {
		v := Verdict{ID: h.ID, Claim: h.Claim, Op: h.Op, Threshold: h.Threshold, Rules: h.Rules}
		for _, c := range h.AllCells() {
			if h.Rules.Paired() {
				v.Cells = append(v.Cells, judgePaired(h, c, runs, want))
				continue
			}
			v.Cells = append(v.Cells, judgeCell(h, c, runs))
		}
		if h.Rules.Paired() {
			v.ValidRuns = map[string]int{}
			for _, c := range append(h.AllCells(), h.VersusCells()...) {
				v.ValidRuns[c.String()] = validRuns(runs, c)
			}
		}
		v.Verdict = Supported
		for _, cv := range v.Cells {
			switch {
			case cv.Verdict == Refuted:
				v.Verdict = Refuted
			case cv.Verdict == Inconclusive && v.Verdict != Refuted:
				v.Verdict = Inconclusive
			}
			if cv.Note != "" && v.Note == "" {
				v.Note = cv.Note
			}
		}
		out = append(out, v)
	}
	return out
}

func values(runs []RunRecord, c design.Cell, metric, minus string) (vals []float64, mechanisms []RunRecord) {
	eachValue(runs, c, metric, minus, func(r RunRecord, v float64) {
		vals = append(vals, v)
		mechanisms = append(mechanisms, r)
	})
	return vals, mechanisms
}

// wrongMechanism says why the runs cannot test h, if one of them had
// another kind of CPU limit than h requires.
func wrongMechanism(h design.Hypothesis, runs []RunRecord) string {
	if h.RequiresMechanism == "" {
		return ""
	}
	for _, r := range runs {
		if r.MechanismKind != h.RequiresMechanism {
			return fmt.Sprintf("not tested: needs a %s limit, the run had %q", h.RequiresMechanism, r.Mechanism)
		}
	}
	return ""
}

// eachValue calls f with every valid run of cell c that has the metric (and
// the metric it is taken minus), and its value.
func eachValue(runs []RunRecord, c design.Cell, metric, minus string, f func(RunRecord, float64)) {
	for _, r := range runs {
		if r.Cell != c || !r.Valid() {
			continue
		}
		v, ok := r.Metrics[metric]
		if !ok {
			continue
		}
		if minus != "" {
			m, ok := r.Metrics[minus]
			if !ok {
				continue
			}
			v -= m
		}
		f(r, v)
	}
}

func judgeCell(h design.Hypothesis, c design.Cell, runs []RunRecord) CellVerdict {
	cv := CellVerdict{Cell: c}
	vals, mechs := values(runs, c, h.MetricKey(), h.MinusKey())
	cv.Runs = len(vals)
	if len(vals) == 0 {
		cv.Verdict, cv.Note = Inconclusive, "no successful run in "+c.String()
		return cv
	}
	if why := wrongMechanism(h, mechs); why != "" {
		st := Summarize(vals)
		cv.Verdict, cv.Note, cv.Median, cv.Min, cv.Max = Inconclusive, why, st.Median, st.Min, st.Max
		return cv
	}
	st := Summarize(vals)
	lo, mid, hi := st.Min, st.Median, st.Max
	if h.Versus != nil {
		other, _ := values(runs, *h.Versus, h.MetricKey(), h.MinusKey())
		if len(other) == 0 {
			cv.Verdict, cv.Note = Inconclusive, "no successful run in "+h.Versus.String()
			return cv
		}
		o := Summarize(other)
		switch h.Compare {
		case design.Ratio:
			if o.Min <= 0 {
				cv.Verdict, cv.Note = Inconclusive, "ratio with a zero or negative denominator"
				return cv
			}
			lo, mid, hi = st.Min/o.Max, st.Median/o.Median, st.Max/o.Min
		case design.Difference:
			lo, mid, hi = st.Min-o.Max, st.Median-o.Median, st.Max-o.Min
		}
	}
	cv.Median, cv.Min, cv.Max = mid, lo, hi
	cv.Verdict = decide(h.Op, h.Threshold, lo, hi)
	return cv
}

// decide judges the range [lo, hi] against op and threshold: supported if
// all of it satisfies the claim, refuted if none does, else inconclusive.
func decide(op design.Op, t design.Threshold, lo, hi float64) Decision {
	var all, none bool
	x := t.Value
	switch op {
	case design.Less:
		all, none = hi < x, lo >= x
	case design.LessEqual:
		all, none = hi <= x, lo > x
	case design.Greater:
		all, none = lo > x, hi <= x
	case design.GreaterEqual:
		all, none = lo >= x, hi < x
	case design.Equal:
		all, none = lo == x && hi == x, x < lo || x > hi
	case design.NotEqual:
		all, none = x < lo || x > hi, lo == x && hi == x
	case design.Between:
		all, none = lo >= t.Lo && hi <= t.Hi, hi < t.Lo || lo > t.Hi
	}
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case all:
		return Supported
	case none:
		return Refuted
	}
	return Inconclusive
}
