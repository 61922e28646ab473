package judge

import (
	"math"
	"testing"
)

// The order-statistic interval of a median: at 5 values [min, max] with
// 93.75% (no narrower one reaches 95%), at 3 [min, max] with 75%, at 9
// the 2nd and 8th with 96.1%, at 20 the 6th and 15th with 95.9%.
func TestMedianInterval(t *testing.T) {
	seq := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(n - i) // unsorted on purpose
		}
		return out
	}
	for _, c := range []struct {
		n        int
		lo, hi   float64
		coverage float64
	}{
		{2, 1, 2, 0.5}, {3, 1, 3, 0.75}, {5, 1, 5, 0.9375}, {6, 1, 6, 0.96875},
		{9, 2, 8, 1 - 2*10.0/512}, {20, 6, 15, 1 - 2*21700.0/1048576},
	} {
		iv := MedianInterval(seq(c.n))
		if iv == nil || iv.Lo != c.lo || iv.Hi != c.hi || math.Abs(iv.Coverage-c.coverage) > 1e-12 {
			t.Errorf("n %d: %+v, want [%v, %v] covering %v", c.n, iv, c.lo, c.hi, c.coverage)
		}
		if iv != nil && iv.Coverage < targetCoverage && iv.Lo != 1 {
			t.Errorf("n %d: below the target it must be [min, max]", c.n)
		}
	}
	if MedianInterval([]float64{4}) != nil {
		t.Error("one value has no interval")
	}
}
