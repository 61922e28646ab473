package judge

import (
	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/strategy"
)

// AdvisedStrategy is the strategy "advised" for one scenario, with the
// probes and the advice it came from (raw data, in results.json).
type AdvisedStrategy struct {
	Scenario string `json:"scenario"`
	// TimeScale is the experiment's: the probes ran in real time against
	// the mock service at this scale, so the advice's rates and times are
	// per real second (a lab second is a real second / TimeScale).
	TimeScale float64                 `json:"time_scale"`
	Strategy  strategy.FileStrategy   `json:"strategy"`
	Advice    advise.Advice           `json:"advice"`
	Probes    map[string]probe.Result `json:"probes"`
	// From is the strategy file it was read from (advise.file), if any:
	// then there are no probes, and Advice is what the file recorded.
	From string `json:"from,omitempty"`
	// Failed says why no strategy could be advised; the scenario's
	// advised cells then fail every run.
	Failed string `json:"failed,omitempty"`
	// Shortened, when set, says the probes ran shorter than the design's,
	// and why.
	Shortened string `json:"shortened,omitempty"`
}

// AdvisedStrategies is the strategy "advised" of each scenario that has
// one (none for a scenario whose advice failed).
func AdvisedStrategies(advised map[string]*AdvisedStrategy) map[string]strategy.Strategy {
	out := map[string]strategy.Strategy{}
	for sc, a := range advised {
		if a != nil && a.Failed == "" {
			out[sc] = a.Strategy.Strategy()
		}
	}
	return out
}
