package records

import (
	"slices"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/strategy"
)

// newAdaptive returns a running limit of spec's algorithm.
func newAdaptive(spec strategy.AdaptiveLimit) (*budgets.Adaptive, error) {
	alg, err := spec.Algorithm()
	if err != nil {
		return nil, err
	}
	return budgets.NewAdaptive(alg)
}

// LimitStats summarises one adaptive limit over the samples of a run or a
// phase: its lowest, median and last value (the limit is sampled every
// sample interval).
type LimitStats struct {
	Min     int `json:"min"`
	Median  int `json:"median"`
	Last    int `json:"last"`
	Samples int `json:"samples"`
}

// limitStats summarises each adaptive limit over the samples with lab time
// in [from, to) (nil when there is none).
func limitStats(timeline []Sample, from, to float64) map[string]LimitStats {
	byDep := map[string][]int{}
	for _, s := range timeline {
		if s.T < from || s.T >= to {
			continue
		}
		for dep, l := range s.Limits {
			byDep[dep] = append(byDep[dep], l)
		}
	}
	if len(byDep) == 0 {
		return nil
	}
	out := map[string]LimitStats{}
	for dep, ls := range byDep {
		last := ls[len(ls)-1]
		slices.Sort(ls)
		out[dep] = LimitStats{Min: ls[0], Median: ls[len(ls)/2], Last: last, Samples: len(ls)}
	}
	return out
}
