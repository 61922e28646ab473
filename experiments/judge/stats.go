package judge

import (
	"math"
	"slices"

	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Summarize returns median (mean of the middle two for an even count),
// minimum and maximum; NaN for no values.
func Summarize(vals []float64) resultsfile.Stat {
	if len(vals) == 0 {
		return resultsfile.Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return resultsfile.Stat{Median: models.Median(s), Min: s[0], Max: s[len(s)-1], N: len(s)}
}
