package judge

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// bootstrapResamples is how many resamples a bootstrap interval draws.
const bootstrapResamples = 10_000

// bootstrapMedian is the 95% percentile-bootstrap interval of the median of
// vals, from a generator seeded by key, so that check recomputes it to the
// last digit.
func bootstrapMedian(vals []float64, key string) *resultsfile.Bootstrap {
	if len(vals) == 0 {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	meds := make([]float64, bootstrapResamples)
	sample := make([]float64, len(vals))
	for i := range meds {
		for j := range sample {
			sample[j] = vals[rng.IntN(len(vals))]
		}
		slices.Sort(sample)
		meds[i] = models.Median(sample)
	}
	slices.Sort(meds)
	return &resultsfile.Bootstrap{Lo: quantile(meds, 0.025), Hi: quantile(meds, 0.975), Resample: bootstrapResamples}
}

// quantile of sorted xs, by linear interpolation between order statistics.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// byRun is a metric of a cell's valid runs, by run number, and the runs'
// CPU mechanisms.
func byRun(runs []resultsfile.RunRecord, c design.Cell, metric, minus string) (map[int]float64, []resultsfile.RunRecord) {
	vals := map[int]float64{}
	var with []resultsfile.RunRecord
	eachValue(runs, c, metric, minus, func(r resultsfile.RunRecord, v float64) {
		vals[r.Run] = v
		with = append(with, r)
	})
	return vals, with
}

// judgePaired judges hypothesis h in cell c under the paired-v2 rules.
func judgePaired(h design.Hypothesis, c design.Cell, runs []resultsfile.RunRecord, want int) resultsfile.CellVerdict {
	cv := resultsfile.CellVerdict{Cell: c}
	for _, cell := range append([]design.Cell{c}, h.VersusCells()...) {
		if k := resultsfile.ValidRuns(runs, cell); k < want {
			cv.Verdict, cv.Note = resultsfile.Inconclusive, fmt.Sprintf("insufficient runs (%d of %d) in %s", k, want, cell)
			return cv
		}
	}
	a, mechs := byRun(runs, c, h.MetricKey(), h.MinusKey())
	if why := wrongMechanism(h, mechs); why != "" {
		cv.Verdict, cv.Note = resultsfile.Inconclusive, why
		return cv
	}
	var vals []float64
	if h.Versus == nil {
		for _, v := range a {
			vals = append(vals, v)
		}
	} else {
		b, _ := byRun(runs, *h.Versus, h.MetricKey(), h.MinusKey())
		for run, x := range a {
			y, ok := b[run]
			if !ok {
				continue
			}
			switch h.Compare {
			case design.Ratio:
				if y <= 0 {
					cv.Verdict, cv.Note = resultsfile.Inconclusive, fmt.Sprintf("ratio with a zero or negative denominator (run %d)", run)
					return cv
				}
				vals = append(vals, x/y)
			case design.Difference:
				vals = append(vals, x-y)
			}
		}
	}
	slices.Sort(vals) // the bootstrap draws by index: one order, whatever the map's
	cv.Runs = len(vals)
	if len(vals) < want {
		cv.Verdict, cv.Note = resultsfile.Inconclusive, fmt.Sprintf("insufficient runs (%d of %d) with the metric %s", len(vals), want, h.MetricKey())
		return cv
	}
	st := Summarize(vals)
	cv.Median, cv.Min, cv.Max = st.Median, st.Min, st.Max
	if h.Rules == design.RulesPairedV3 {
		cv.Interval = MedianInterval(vals)
	} else {
		cv.Bootstrap = bootstrapMedian(vals, h.ID+" "+c.String())
	}
	cv.Verdict = decide(h.Op, h.Threshold, st.Min, st.Max)
	return cv
}
