package judge

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// metricRatio is the median's order-statistic interval of a cell's pairs'
// ratios of metric (at the time scale ÷ at time scale 1, by run number),
// nil under 2 pairs: what the twins say the time scale does to that
// figure of that cell.
func metricRatio(b *resultsfile.Bias, runs []resultsfile.RunRecord, c design.Cell, metric string) *resultsfile.Interval {
	at, _ := byRun(runs, c, metric, "")
	one, _ := byRun(b.Twins, c, metric, "")
	var ratios []float64
	for run := 1; run <= b.Pairs; run++ {
		x, ok1 := at[run]
		y, ok2 := one[run]
		if ok1 && ok2 && y > 0 && x > 0 {
			ratios = append(ratios, x/y)
		}
	}
	return MedianInterval(ratios)
}

// holdsAcross says whether verdict v of h holds across the time-scale
// bias its cells' pairs allow: each judged cell's range is brought back to
// time scale 1 by every ratio of h's metric (at the time scale ÷ at 1)
// within the median's interval of the cell's pairs — divided by the
// cell's ratio, times its versus cell's — and judged again; the verdict
// holds when every cell's decision is the same at both ends. It also
// returns the corrected ranges, for the note. A verdict on a difference
// cannot be brought back so (the bias of a difference is not the ratio of
// its terms' biases), nor one whose cells have under 2 pairs: it does not
// hold.
func holdsAcross(b *resultsfile.Bias, v resultsfile.Verdict, h design.Hypothesis, runs []resultsfile.RunRecord) (bool, string) {
	if h.Minus != "" || h.Compare == design.Difference {
		return false, ""
	}
	var ranges []string
	for _, cv := range v.Cells {
		f := metricRatio(b, runs, cv.Cell, h.MetricKey())
		if f == nil {
			return false, ""
		}
		// the figure at time scale 1 is the figure ÷ the ratio
		lo, hi := 1/f.Hi, 1/f.Lo
		if h.Versus != nil {
			g := metricRatio(b, runs, *h.Versus, h.MetricKey())
			if g == nil {
				return false, ""
			}
			lo, hi = lo*g.Lo, hi*g.Hi
		}
		cLo, cHi := widen(cv.Min, cv.Max, lo, hi)
		if decide(h.Op, h.Threshold, cLo, cHi) != cv.Verdict {
			return false, ""
		}
		ranges = append(ranges, fmt.Sprintf("%s [%.3g, %.3g]", cv.Cell, cLo, cHi))
	}
	return true, strings.Join(ranges, "; ")
}

// widen is the range [min, max] times every factor in [lo, hi] (lo, hi >
// 0).
func widen(minV, maxV, lo, hi float64) (float64, float64) {
	a, b, c, d := minV*lo, minV*hi, maxV*lo, maxV*hi
	return min(a, b, c, d), max(a, b, c, d)
}
