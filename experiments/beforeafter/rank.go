package beforeafter

import (
	"math"
	"math/big"
	"slices"
)

// ExactLimit is the most values (both samples together for Mann–Whitney,
// pairs for the signed-rank test) whose null distribution is counted
// exactly: the counts fit a uint64 up to C(60, 30) and 2^62. Beyond it,
// the normal approximation is used, for the tests and the intervals alike,
// with a continuity correction of half a rank (and the ties' correction
// in the tests' variance).
const ExactLimit = 60

// doubledRanks are the midranks of vals, doubled so that they are whole
// numbers: a tie over positions i..j (from 1) ranks i+j for each.
func doubledRanks(vals []float64) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case vals[a] < vals[b]:
			return -1
		case vals[a] > vals[b]:
			return 1
		}
		return 0
	})
	r := make([]int, len(vals))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && vals[idx[j+1]] == vals[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = i + j + 2
		}
		i = j + 1
	}
	return r
}

// subsetSums counts, for the k-subsets of ranks, how many have each sum:
// out[s] is the number of ways k of the ranks add up to s.
func subsetSums(ranks []int, k int) []uint64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	dp := make([][]uint64, k+1)
	for j := range dp {
		dp[j] = make([]uint64, total+1)
	}
	dp[0][0] = 1
	for _, r := range ranks {
		for j := k; j >= 1; j-- {
			for s := total; s >= r; s-- {
				dp[j][s] += dp[j-1][s-r]
			}
		}
	}
	return dp[k]
}

// anySubsetSums counts, over every subset of ranks, how many have each sum
// (the signed-rank test's 2^n equally likely signs).
func anySubsetSums(ranks []int) []uint64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	dp := make([]uint64, total+1)
	dp[0] = 1
	for _, r := range ranks {
		for s := total; s >= r; s-- {
			dp[s] += dp[s-r]
		}
	}
	return dp
}

// twoSided is the chance, under counts (of sums, by sum), of a sum at
// least as far from the centre as observed, and the smallest such chance
// any sum reaches; centre2 is twice the centre (whole, as sums are).
func twoSided(counts []uint64, centre2, observed int) (p, least float64) {
	dev := abs(2*observed - centre2)
	var total, tail, far float64
	farthest := 0
	for s, c := range counts {
		if c == 0 {
			continue
		}
		total += float64(c)
		d := abs(2*s - centre2)
		if d >= dev {
			tail += float64(c)
		}
		if d > farthest {
			farthest, far = d, 0
		}
		if d == farthest {
			far += float64(c)
		}
	}
	return tail / total, far / total
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// mannWhitney is the two-sided p of the Mann–Whitney (Wilcoxon rank-sum)
// test that after is drawn from before's distribution, exact (ties by
// midranks, the permutation distribution of the pooled values) up to
// ExactLimit values, beyond by the normal approximation; least is the
// smallest p these pooled values allow.
func mannWhitney(before, after []float64) (p, least float64) {
	pooled := append(slices.Clone(before), after...)
	ranks := doubledRanks(pooled)
	n, k := len(pooled), len(after)
	observed := 0
	for _, r := range ranks[len(before):] {
		observed += r
	}
	if n <= ExactLimit {
		return twoSided(subsetSums(ranks, k), 2*k*(n+1), observed)
	}
	// Normal approximation of the rank sum (in doubled ranks, so that the
	// continuity correction of half a rank is 1), the ties' correction in
	// its variance.
	ties := 0.0
	for _, t := range tieSizes(pooled) {
		ties += float64(t*t*t - t)
	}
	m := float64(len(before))
	sd := math.Sqrt(4 * m * float64(k) / 12 * (float64(n+1) - ties/float64(n*(n-1))))
	z := math.Max(0, math.Abs(float64(observed-k*(n+1)))-1) / sd
	return math.Min(1, 2*normalTail(z)), math.Min(1, 2*normalTail((m*float64(k)-1)/sd))
}

// tieSizes are the sizes of the groups of equal values in vals.
func tieSizes(vals []float64) []int {
	s := slices.Clone(vals)
	slices.Sort(s)
	var out []int
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		out = append(out, j-i)
		i = j
	}
	return out
}

// signedRank is the two-sided p of the Wilcoxon signed-rank test that the
// differences d are symmetric about 0, exact (zeros dropped, ties by
// midranks) up to ExactLimit nonzero differences, beyond by the normal
// approximation; least is the smallest p these absolute differences
// allow. No nonzero difference: p 1.
func signedRank(d []float64) (p, least float64) {
	var mag []float64
	var pos []bool
	for _, x := range d {
		if x != 0 {
			mag, pos = append(mag, math.Abs(x)), append(pos, x > 0)
		}
	}
	if len(mag) == 0 {
		return 1, 1
	}
	ranks := doubledRanks(mag)
	total, observed := 0, 0
	for i, r := range ranks {
		total += r
		if pos[i] {
			observed += r
		}
	}
	if len(mag) <= ExactLimit {
		return twoSided(anySubsetSums(ranks), total, observed)
	}
	ties := 0.0
	for _, t := range tieSizes(mag) {
		ties += float64(t*t*t - t)
	}
	// In doubled ranks, as above: half a rank's correction is 1.
	n := float64(len(mag))
	variance := 4 * (n*(n+1)*(2*n+1)/24 - ties/48)
	z := math.Max(0, math.Abs(float64(2*observed-total))/2-1) / math.Sqrt(variance)
	least = 2 * normalTail((float64(total)/2-1)/math.Sqrt(variance))
	return math.Min(1, 2*normalTail(z)), least
}

// normalTail is P(Z > z) for a standard normal Z.
func normalTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// binomial is C(n, k) as a float64 (exact while it fits 53 bits).
func binomial(n, k int) float64 {
	f, _ := new(big.Float).SetInt(new(big.Int).Binomial(int64(n), int64(k))).Float64()
	return f
}

// LeastUnpaired is the smallest two-sided p the Mann–Whitney test can
// give with m and n runs and no ties: 2 / C(m+n, n).
func LeastUnpaired(m, n int) float64 {
	if m < 1 || n < 1 {
		return 1
	}
	return math.Min(1, 2/binomial(m+n, n))
}

// LeastPaired is the smallest two-sided p the signed-rank test can give
// with n pairs: 2 / 2^n.
func LeastPaired(n int) float64 {
	if n < 1 {
		return 1
	}
	return math.Min(1, math.Pow(2, float64(1-n)))
}

// RunsNeeded is the fewest runs on each side with which the unpaired test
// can reach level (alpha over the comparisons counted, Holm's first step):
// the smallest n with LeastUnpaired(n, n) ≤ level.
func RunsNeeded(level float64) int {
	n := 2
	for LeastUnpaired(n, n) > level && n < 1000 {
		n++
	}
	return n
}

// PairsNeeded is the fewest pairs with which the paired test can reach
// level: the smallest n with LeastPaired(n) ≤ level.
func PairsNeeded(level float64) int {
	n := 2
	for LeastPaired(n) > level && n < 1000 {
		n++
	}
	return n
}
