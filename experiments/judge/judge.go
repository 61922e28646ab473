// Package judge turns what an experiment measured into what it found, as
// pure functions over the results' data (experiments/resultsfile, which
// owns results.json and reads and writes it): each run's metrics, its
// reconciliation of the client's figures with the server's, and its
// status (derive, reconcile); each cell's statistics and bound; the
// verdicts on the preregistered hypotheses, gated by the time-scale
// calibration; the check that recomputes all of them from stored results;
// and the merge of shards into what one machine would have written. It is
// pure: it runs nothing, and reads and writes no file.
package judge

import (
	"fmt"
	"math"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Verdicts decides every hypothesis from the runs; want is the runs per
// cell the experiment asked for. A cell without valid runs, or whose CPU
// mechanism is not the one required, is inconclusive; under paired-v2
// rules so is one with fewer valid runs than asked.
func Verdicts(hs []design.Hypothesis, runs []resultsfile.RunRecord, want int) []resultsfile.Verdict {
	var out []resultsfile.Verdict
	for _, h := range hs {
		v := resultsfile.Verdict{ID: h.ID, Claim: h.Claim, Op: h.Op, Threshold: h.Threshold, Rules: h.Rules}
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
				v.ValidRuns[c.String()] = resultsfile.ValidRuns(runs, c)
			}
		}
		v.Verdict = resultsfile.Supported
		for _, cv := range v.Cells {
			switch {
			case cv.Verdict == resultsfile.Refuted:
				v.Verdict = resultsfile.Refuted
			case cv.Verdict == resultsfile.Inconclusive && v.Verdict != resultsfile.Refuted:
				v.Verdict = resultsfile.Inconclusive
			}
			if cv.Note != "" && v.Note == "" {
				v.Note = cv.Note
			}
		}
		out = append(out, v)
	}
	return out
}

func values(runs []resultsfile.RunRecord, c design.Cell, metric, minus string) (vals []float64, mechanisms []resultsfile.RunRecord) {
	eachValue(runs, c, metric, minus, func(r resultsfile.RunRecord, v float64) {
		vals = append(vals, v)
		mechanisms = append(mechanisms, r)
	})
	return vals, mechanisms
}

// wrongMechanism says why the runs cannot test h, if one of them had
// another kind of CPU limit than h requires.
func wrongMechanism(h design.Hypothesis, runs []resultsfile.RunRecord) string {
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
func eachValue(runs []resultsfile.RunRecord, c design.Cell, metric, minus string, f func(resultsfile.RunRecord, float64)) {
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

func judgeCell(h design.Hypothesis, c design.Cell, runs []resultsfile.RunRecord) resultsfile.CellVerdict {
	cv := resultsfile.CellVerdict{Cell: c}
	vals, mechs := values(runs, c, h.MetricKey(), h.MinusKey())
	cv.Runs = len(vals)
	if len(vals) == 0 {
		cv.Verdict, cv.Note = resultsfile.Inconclusive, "no successful run in "+c.String()
		return cv
	}
	if why := wrongMechanism(h, mechs); why != "" {
		st := Summarize(vals)
		cv.Verdict, cv.Note, cv.Median, cv.Min, cv.Max = resultsfile.Inconclusive, why, st.Median, st.Min, st.Max
		return cv
	}
	st := Summarize(vals)
	lo, mid, hi := st.Min, st.Median, st.Max
	if h.Versus != nil {
		other, _ := values(runs, *h.Versus, h.MetricKey(), h.MinusKey())
		if len(other) == 0 {
			cv.Verdict, cv.Note = resultsfile.Inconclusive, "no successful run in "+h.Versus.String()
			return cv
		}
		o := Summarize(other)
		switch h.Compare {
		case design.Ratio:
			if o.Min <= 0 {
				cv.Verdict, cv.Note = resultsfile.Inconclusive, "ratio with a zero or negative denominator"
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
func decide(op design.Op, t design.Threshold, lo, hi float64) resultsfile.Decision {
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
		return resultsfile.Inconclusive
	case all:
		return resultsfile.Supported
	case none:
		return resultsfile.Refuted
	}
	return resultsfile.Inconclusive
}
