package judge

import (
	"math"
	"slices"

	"github.com/loadlab/loadlab/experiments/models"
)

// Stat is the median and range of a metric over a cell's runs.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Summarize returns median (mean of the middle two for an even count),
// minimum and maximum; NaN for no values.
func Summarize(vals []float64) Stat {
	if len(vals) == 0 {
		return Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return Stat{Median: models.Median(s), Min: s[0], Max: s[len(s)-1], N: len(s)}
}
