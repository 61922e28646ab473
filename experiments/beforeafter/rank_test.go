package beforeafter

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// The smallest p values of the exact tests, and the runs they imply at a
// level: five runs a side reach 0.05 over six comparisons (2/252 =
// 0.0079 ≤ 0.0083), not over seven; pairs need eight for six.
func TestLeastPAndRunsNeeded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want float64
	}{
		{LeastUnpaired(5, 5), 2.0 / 252}, {LeastUnpaired(3, 3), 0.1}, {LeastUnpaired(4, 6), 2.0 / 210},
		{LeastPaired(5), 2.0 / 32}, {LeastPaired(8), 2.0 / 256},
	} {
		if !near(c.got, c.want) {
			t.Errorf("least p %v, want %v", c.got, c.want)
		}
	}
	for _, c := range []struct {
		level      float64
		runs, pair int
	}{{0.05, 4, 6}, {0.05 / 6, 5, 8}, {0.05 / 7, 6, 9}, {0.05 / 2, 5, 7}, {0.01, 5, 8}} {
		if r, p := RunsNeeded(c.level), PairsNeeded(c.level); r != c.runs || p != c.pair {
			t.Errorf("level %.4g: runs %d, pairs %d; want %d, %d", c.level, r, p, c.runs, c.pair)
		}
	}
}

// Exact p values of small cases, by hand: complete separation of 5 and 5
// is 2/C(10,5); of 3 and 3, 2/20; one swap at the boundary, 2·2/252; five
// positive differences, 2/32; identical samples, 1 (the smallest p their
// ties allow, 4/20).
func TestExactPValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		before, after []float64
		p, least      float64
	}{
		{"5v5 apart", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252, 2.0 / 252},
		{"5v5 apart, other way", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252, 2.0 / 252},
		{"3v3 apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1, 0.1},
		{"5v5 one swap", []float64{1, 2, 3, 4, 6}, []float64{5, 7, 8, 9, 10}, 4.0 / 252, 2.0 / 252},
		// Ties leave fewer splits as extreme: {1, 1, 2} or {3, 3, 2}, 4 of 20.
		{"the same", []float64{1, 2, 3}, []float64{1, 2, 3}, 1, 0.2},
	} {
		p, least := mannWhitney(c.before, c.after)
		if !near(p, c.p) || !near(least, c.least) {
			t.Errorf("%s: p %v (least %v), want %v (%v)", c.name, p, least, c.p, c.least)
		}
	}
	if p, least := signedRank([]float64{0.1, 0.2, 0.3, 0.4, 0.5}); !near(p, 2.0/32) || !near(least, 2.0/32) {
		t.Errorf("five positive differences: p %v, least %v; want 1/16", p, least)
	}
	// Ranks 1..5, negative rank 1: T+ = 14; P(T+ ≥ 14) = 2/32 on each side.
	if p, _ := signedRank([]float64{-0.1, 0.2, 0.3, 0.4, 0.5}); !near(p, 4.0/32) {
		t.Errorf("one small negative difference: p %v, want 4/32", p)
	}
	if p, least := signedRank([]float64{0, 0}); p != 1 || least != 1 {
		t.Errorf("no nonzero difference: p %v, least %v", p, least)
	}
}

// The counted distributions agree with enumerating every relabelling
// (every split of the pooled values, every sign), ties included.
func TestExactAgainstEnumeration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		m, n := 2+rng.IntN(5), 2+rng.IntN(5)
		draw := func(k int) []float64 {
			out := make([]float64, k)
			for i := range out {
				out[i] = float64(rng.IntN(6)) // few values: many ties
			}
			return out
		}
		b, a := draw(m), draw(n)
		if p, _ := mannWhitney(b, a); !nearTol(p, mannWhitneyByEnumeration(b, a)) {
			t.Fatalf("trial %d: %v vs %v: p %v, by enumeration %v", trial, b, a, p, mannWhitneyByEnumeration(b, a))
		}
		d := draw(2 + rng.IntN(7))
		for i := range d {
			d[i] -= 2.5 + float64(rng.IntN(2))
		}
		got, _ := signedRank(d)
		if want := signedRankByEnumeration(d); !nearTol(got, want) {
			t.Fatalf("trial %d: %v: signed-rank p %v, by enumeration %v", trial, d, got, want)
		}
	}
}

func nearTol(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func mannWhitneyByEnumeration(before, after []float64) float64 {
	pooled := append(slices.Clone(before), after...)
	ranks := doubledRanks(pooled)
	n, k := len(pooled), len(after)
	centre := k * (n + 1)
	obs := 0
	for _, r := range ranks[len(before):] {
		obs += r
	}
	var hit, all int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != k {
			continue
		}
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		all++
		if abs(s-centre) >= abs(obs-centre) {
			hit++
		}
	}
	return float64(hit) / float64(all)
}

func signedRankByEnumeration(d []float64) float64 {
	var mag []float64
	var pos []bool
	for _, x := range d {
		if x != 0 {
			mag, pos = append(mag, math.Abs(x)), append(pos, x > 0)
		}
	}
	if len(mag) == 0 {
		return 1
	}
	ranks := doubledRanks(mag)
	total, obs := 0, 0
	for i, r := range ranks {
		total += r
		if pos[i] {
			obs += r
		}
	}
	hit := 0
	for mask := 0; mask < 1<<len(mag); mask++ {
		s := 0
		for i := range mag {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		if abs(2*s-total) >= abs(2*obs-total) {
			hit++
		}
	}
	return float64(hit) / float64(int(1)<<len(mag))
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// Midranks: ties share the mean of their positions (doubled).
func TestDoubledRanks(t *testing.T) {
	t.Parallel()
	if got := doubledRanks([]float64{3, 1, 3, 2, 3}); !slices.Equal(got, []int{8, 2, 8, 4, 8}) {
		t.Errorf("doubled ranks %v", got)
	}
}

// The intervals: 5 and 5 take the 3rd smallest to the 3rd largest of the
// 25 differences (6, 7, 7, …, 13, 13, 14; coverage 1 − 2·4/252); 5 pairs [min, max] of the Walsh
// averages (1 − 2/32), as the sign test's order-statistic interval.
func TestShiftIntervals(t *testing.T) {
	t.Parallel()
	b, a := []float64{1, 2, 3, 4, 5}, []float64{11, 12, 13, 14, 15}
	e := shiftUnpaired(b, a, 0.95)
	if e.est != 10 || e.lo != 7 || e.hi != 13 || !near(e.coverage, 1-8.0/252) {
		t.Errorf("unpaired %+v; want 10 [7, 13] at %.5f", e, 1-8.0/252)
	}
	e = shiftPaired([]float64{1, 2, 3, 4, 5}, 0.95)
	if e.est != 3 || e.lo != 1 || e.hi != 5 || !near(e.coverage, 1-2.0/32) {
		t.Errorf("paired %+v; want 3 [1, 5] at 0.9375", e)
	}
	// 10 pairs: P(T+ ≤ 8) = 25/1024 ≤ 0.025 < P(T+ ≤ 9) = 33/1024, so
	// the 9th smallest and largest of the 55 Walsh averages.
	d := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	e = shiftPaired(d, 0.95)
	if !near(e.coverage, 1-2*25.0/1024) {
		t.Errorf("10 pairs: coverage %v, want %v", e.coverage, 1-2*25.0/1024)
	}
}

// Holm: each p times the hypotheses left at its step, made monotone.
func TestHolm(t *testing.T) {
	t.Parallel()
	got := holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("holm %v, want %v", got, want)
		}
	}
	if got := holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("holm %v, want [1 1]", got)
	}
}

// Beyond the exact limit, the normal approximation with a continuity
// correction of half a rank (and the ties' correction) gives the p values
// of SciPy 1.10's wilcoxon(correction=True, mode="approx") and
// mannwhitneyu(use_continuity=True, method="asymptotic") on the same data;
// without the correction, p would be 0.015278, 3.3610e-05 and 0.099090.
func TestNormalApproximation(t *testing.T) {
	t.Parallel()
	var d1, d2, b, a []float64
	for i := 1; i <= 70; i++ {
		d1 = append(d1, float64(i)/10*signIf(i%3 == 0))
		d2 = append(d2, float64(i%20+1)/10*signIf(i%4 == 0)) // ties
	}
	for i := range 35 {
		b, a = append(b, float64(i%12)), append(a, float64(i*5%13+1))
	}
	for _, c := range []struct {
		name string
		got  func() float64
		want float64
	}{
		{"signed-rank, 70 pairs", func() float64 { p, _ := signedRank(d1); return p }, 0.0154012503870918},
		{"signed-rank, 70 pairs with ties", func() float64 { p, _ := signedRank(d2); return p }, 3.4042596337426749e-05},
		{"Mann–Whitney, 35 and 35 with ties", func() float64 { p, _ := mannWhitney(b, a); return p }, 0.10030254151630769},
	} {
		if got := c.got(); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%s: p %.17g, want %.17g", c.name, got, c.want)
		}
	}
}

// The intervals beyond the exact limit: the k-th smallest to the k-th
// largest, k the largest with Φ((k − 1 + ½ − mean)/sd) ≤ 2.5% (the
// continuity-corrected normal approximation of the statistic's
// distribution), and that coverage; figures from SciPy 1.10's norm.cdf
// (uncorrected, the paired coverage would be 0.9504011).
func TestNormalIntervals(t *testing.T) {
	t.Parallel()
	var b, a, d []float64
	for i := 1; i <= 35; i++ {
		b, a = append(b, float64(i)), append(a, 1.3*float64(i)+5)
	}
	for i := 1; i <= 70; i++ {
		d = append(d, float64(i)/10*signIf(i%3 == 0))
	}
	for _, c := range []struct {
		name                  string
		got                   estimate
		est, lo, hi, coverage float64
	}{
		{"unpaired, 35 and 35 (446th of 1225)", shiftUnpaired(b, a, 0.95), 10.4, 4.2, 16.6, 0.9501906238606243},
		{"paired, 70 (908th of 2485)", shiftPaired(d, 0.95), 1.35, 0.25, 2.4, 0.9500604242219608},
	} {
		e := c.got
		if math.Abs(e.est-c.est) > 1e-9 || math.Abs(e.lo-c.lo) > 1e-9 || math.Abs(e.hi-c.hi) > 1e-9 || math.Abs(e.coverage-c.coverage) > 1e-12 {
			t.Errorf("%s: %+v; want %v [%v, %v] at %v", c.name, e, c.est, c.lo, c.hi, c.coverage)
		}
	}
}

// signIf is -1 when negative, else 1.
func signIf(negative bool) float64 {
	if negative {
		return -1
	}
	return 1
}
