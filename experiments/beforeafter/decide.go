package beforeafter

import (
	"fmt"
	"math"
)

// test runs each row's test whose decision is open, adjusts the p values
// by Holm over them, and decides each: a change is called when its
// adjusted p is at most alpha and it moves the metric by at least the
// minimum effect; level is alpha over the comparisons counted, which
// every open row's values can reach (enoughRuns).
func (r *Report) test(level float64) {
	var ps []float64
	var tested []int
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Decision != "" {
			continue
		}
		row.measure(level, r.Level)
		ps, tested = append(ps, *row.P), append(tested, i)
	}
	for k, adj := range holm(ps) {
		row := &r.Rows[tested[k]]
		row.HolmP = ptr(adj)
		row.decide(r.Alpha, r.MinEffect)
	}
}

// reaches says whether the row's values can reach level: on the paired
// test (pairs enough), or on the unpaired one (2 values a side at least).
func (row *Row) reaches(level float64) bool {
	if d := row.pairedDiffs(false); len(d) >= 2 && LeastPaired(len(d)) <= level {
		return true
	}
	return len(row.before) >= 2 && len(row.after) >= 2 && LeastUnpaired(len(row.before), len(row.after)) <= level
}

// measure runs the row's test and estimate: paired when its cells pair by
// seed with pairs enough for level, else unpaired; on the logs when every
// value is positive (a ratio), else on the values (a difference).
func (row *Row) measure(level, intervalLevel float64) {
	logs := positive(row.before, row.after)
	b, a := row.before, row.after
	if logs {
		b, a = logsOf(b), logsOf(a)
	}
	var e estimate
	var p float64
	if d := row.pairedDiffs(logs); len(d) >= 2 && LeastPaired(len(d)) <= level {
		row.Test, row.Pairs, row.Normal = Paired, len(d), len(d) > ExactLimit
		p, _ = signedRank(d)
		e = shiftPaired(d, intervalLevel)
	} else {
		row.Test, row.Normal = Unpaired, len(b)+len(a) > ExactLimit
		p, _ = mannWhitney(b, a)
		e = shiftUnpaired(b, a, intervalLevel)
	}
	row.P, row.Coverage = ptr(p), ptr(e.coverage)
	if logs {
		row.Scale = Ratio
		row.Estimate, row.Lo, row.Hi = ptr(math.Exp(e.est)), ptr(math.Exp(e.lo)), ptr(math.Exp(e.hi))
		row.Change = ptr(math.Exp(e.est) - 1)
		return
	}
	row.Scale = Difference
	row.Estimate, row.Lo, row.Hi = ptr(e.est), ptr(e.lo), ptr(e.hi)
	if row.Before.Median != 0 {
		row.Change = ptr(e.est / math.Abs(row.Before.Median))
	}
}

func logsOf(vals []float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = math.Log(v)
	}
	return out
}

// decide calls the row better, worse or no change from its adjusted p,
// its change and the metric's direction; an estimated shift of 0 is no
// change, whatever the minimum effect. The minimum effect is relative:
// from a median of 0 (no relative change) any significant shift is
// called, and the note says so.
func (row *Row) decide(alpha, minEffect float64) {
	row.Decision = NoChange
	if *row.HolmP > alpha {
		return
	}
	shift := *row.Estimate
	if row.Scale == Ratio {
		shift = math.Log(shift)
	}
	if shift == 0 {
		row.Note = "significant, but the estimated change is 0"
		return
	}
	beyond := true
	if row.Change != nil {
		beyond = math.Abs(*row.Change) >= minEffect
	} else {
		row.Note = "from a median of 0 there is no relative change: the minimum effect does not apply"
	}
	if !beyond {
		row.Note = fmt.Sprintf("significant, but within the minimum effect of %g%%", 100*minEffect)
		return
	}
	up := shift > 0
	if up == (row.Metric.Direction == HigherIsBetter) {
		row.Decision = Better
	} else {
		row.Decision = Worse
	}
}
