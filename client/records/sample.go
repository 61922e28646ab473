package records

import (
	"time"

	"github.com/loadlab/loadlab/budgets"
)

// Sample is the client's in-flight state at one moment of a run.
type Sample struct {
	// T is lab seconds since the run started (real seconds / time scale).
	T          float64 `json:"t"`
	Enrichment int     `json:"enrichment"`
	Records    int     `json:"records"`
	InFlight   int     `json:"records_in_flight"`
	// Calls is the calls in flight to a pipeline's other dependencies.
	Calls map[string]int `json:"calls_in_flight,omitempty"`
	// Limits is each adaptive limit (C5) at the moment, by dependency.
	Limits map[string]int `json:"limits,omitempty"`
}

// CallsTo is the calls in flight to the dependency dep at the sample:
// the lab's two dependencies have fields of their own, others are in
// Calls.
func (s Sample) CallsTo(dep string) int {
	switch dep {
	case Enrichment:
		return s.Enrichment
	case Records:
		return s.Records
	}
	return s.Calls[dep]
}

// sample records calls and records in flight every cfg.SampleInterval until
// the returned stop is called; stop returns the samples. With no interval
// it records nothing.
func sample(cfg Config, start time.Time, m *budgets.Metrics, deps []string, records func() int, limits func() map[string]int) (stop func() []Sample) {
	if cfg.SampleInterval <= 0 {
		return func() []Sample { return nil }
	}
	var timeline []Sample
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(cfg.SampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				smp := Sample{T: now.Sub(start).Seconds() / cfg.TimeScale,
					Enrichment: m.InFlight(Enrichment), Records: m.InFlight(Records), InFlight: records(), Limits: limits()}
				for _, d := range deps {
					if d != Enrichment && d != Records {
						if smp.Calls == nil {
							smp.Calls = map[string]int{}
						}
						smp.Calls[d] = m.InFlight(d)
					}
				}
				timeline = append(timeline, smp)
			}
		}
	}()
	return func() []Sample {
		close(done)
		<-sampled
		return timeline
	}
}
