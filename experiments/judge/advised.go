package judge

import (
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// AdvisedStrategies is the strategy "advised" of each scenario that has
// one (none for a scenario whose advice failed).
func AdvisedStrategies(advised map[string]*resultsfile.AdvisedStrategy) map[string]strategy.Strategy {
	out := map[string]strategy.Strategy{}
	for sc, a := range advised {
		if a != nil && a.Failed == "" {
			out[sc] = a.Strategy.Strategy()
		}
	}
	return out
}
