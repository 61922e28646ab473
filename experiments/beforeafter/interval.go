package beforeafter

import (
	"math"
	"slices"
)

// estimate is a shift (after minus before, on the scale the values were
// given in) with its distribution-free interval and the interval's exact
// coverage.
type estimate struct {
	est, lo, hi, coverage float64
}

// shiftUnpaired is the Hodges–Lehmann estimate of the shift from before
// to after, the median of every difference a − b, and its interval from
// the Mann–Whitney distribution: the k-th smallest to the k-th largest
// difference, k the largest with P(U ≤ k−1) ≤ (1 − level)/2 (at least 1:
// then [min, max] with the coverage it has).
func shiftUnpaired(before, after []float64, level float64) estimate {
	d := make([]float64, 0, len(before)*len(after))
	for _, a := range after {
		for _, b := range before {
			d = append(d, a-b)
		}
	}
	slices.Sort(d)
	m, n := len(before), len(after)
	var cdf func(u int) float64
	if m+n <= ExactLimit {
		ranks := make([]int, m+n)
		for i := range ranks {
			ranks[i] = 2 * (i + 1)
		}
		cdf = cumulative(subsetSums(ranks, n), n*(n+1), 1/binomial(m+n, n))
	} else {
		mean, sd := float64(m*n)/2, math.Sqrt(float64(m*n*(m+n+1))/12)
		cdf = func(u int) float64 { return 1 - normalTail((float64(u)+0.5-mean)/sd) }
	}
	return fromOrder(d, cdf, level)
}

// shiftPaired is the Hodges–Lehmann estimate of the median of the
// differences d (after − before, pair by pair), the median of their Walsh
// averages, with its interval from the signed-rank distribution.
func shiftPaired(d []float64, level float64) estimate {
	var w []float64
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	n := len(d)
	var cdf func(t int) float64
	if n <= ExactLimit {
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = 2 * (i + 1)
		}
		cdf = cumulative(anySubsetSums(ranks), 0, math.Pow(2, -float64(n)))
	} else {
		nf := float64(n)
		mean, sd := nf*(nf+1)/4, math.Sqrt(nf*(nf+1)*(2*nf+1)/24)
		cdf = func(t int) float64 { return 1 - normalTail((float64(t)+0.5-mean)/sd) }
	}
	return fromOrder(w, cdf, level)
}

// cumulative turns counts by doubled sum into P(statistic ≤ u), the
// statistic (sum − least)/2, each count weighing scale.
func cumulative(counts []uint64, least int, scale float64) func(u int) float64 {
	var acc []float64
	sum := 0.0
	for s := least; s < len(counts); s += 2 {
		sum += float64(counts[s]) * scale
		acc = append(acc, sum)
	}
	return func(u int) float64 {
		if u < 0 {
			return 0
		}
		return acc[min(u, len(acc)-1)]
	}
}

// fromOrder is the estimate (the median of sorted) and the interval from
// the k-th smallest to the k-th largest of sorted, k the largest with
// cdf(k−1) ≤ (1 − level)/2, at least 1.
func fromOrder(sorted []float64, cdf func(int) float64, level float64) estimate {
	k := 1
	for k+1 <= (len(sorted)+1)/2 && cdf(k) <= (1-level)/2 {
		k++
	}
	return estimate{est: median(sorted), lo: sorted[k-1], hi: sorted[len(sorted)-k], coverage: 1 - 2*cdf(k-1)}
}

// median of sorted values (the mean of the middle two for an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// holm is Holm's step-down adjustment of p: each p multiplied by the
// hypotheses not yet rejected at its step, made monotone, at most 1.
func holm(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(p))
	running := 0.0
	for step, i := range idx {
		running = math.Max(running, math.Min(1, float64(len(p)-step)*p[i]))
		out[i] = running
	}
	return out
}
