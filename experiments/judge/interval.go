package judge

import (
	"math/big"
	"slices"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// targetCoverage is the coverage MedianInterval narrows to when it can.
const targetCoverage = 0.95

// MedianInterval is the narrowest order-statistic interval of the median
// of vals whose coverage is at least 95%, or, when no interval of n values
// reaches it, [min, max] with its coverage (at 5 values 93.75%, at 3
// 75%); nil for fewer than 2 values.
func MedianInterval(vals []float64) *resultsfile.Interval {
	n := len(vals)
	if n < 2 {
		return nil
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	k := 1
	for k+1 <= n/2 && coverage(n, k+1) >= targetCoverage {
		k++
	}
	return &resultsfile.Interval{Lo: s[k-1], Hi: s[n-k], Coverage: coverage(n, k)}
}

// coverage is 1 − 2·P(Binomial(n, ½) ≤ k−1): the chance that the k-th
// smallest and k-th largest of n values hold the median between them.
func coverage(n, k int) float64 {
	tail := new(big.Int)
	for i := 0; i < k; i++ {
		tail.Add(tail, new(big.Int).Binomial(int64(n), int64(i)))
	}
	p := new(big.Rat).SetFrac(tail, new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := p.Float64()
	return 1 - 2*f
}
