package plan

import (
	"math"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Bound is a cell's Little's-law ceiling on accepted records per lab second:
// the smallest of what the writes, the enrichment budget and the records in
// flight allow, from the configured profiles.
type Bound struct {
	WriteCapacity      float64 `json:"write_capacity"`
	EnrichmentCapacity float64 `json:"enrichment_capacity"`
	InFlightCapacity   float64 `json:"in_flight_capacity"`
	Bound              float64 `json:"bound"`
	Limit              Binding `json:"limit"`
	// EnrichmentCall and WriteCall are the mean call times (lab seconds)
	// used, each capped at the call timeout.
	EnrichmentCall float64 `json:"enrichment_call_s"`
	WriteCall      float64 `json:"write_call_s"`
}

// Binding is what sets a cell's bound.
type Binding string

// What binds a cell: the least of its capacities ("" for a cell no one
// profile bounds, a phased scenario's).
const (
	BoundByWrites          Binding = "writes"
	BoundByEnrichment      Binding = "enrichment"
	BoundByRecordsInFlight Binding = "records in flight"
)

// meanCapped is the mean of min(X, cap) for a service-time distribution,
// from 20 000 seeded draws: a property of the configuration, not of a run.
func meanCapped(spec latency.Spec, limit time.Duration) float64 {
	d, err := spec.Build()
	if err != nil {
		return math.NaN()
	}
	src := latency.NewMulberry32(12345)
	const n = 20000
	sum := 0.0
	for range n {
		sum += min(d.Sample(src), limit).Seconds()
	}
	return sum / n
}

// CellBound computes the bound for a strategy under a mock profile, with
// recordsInFlight resolved (C1: the run's GOMAXPROCS).
func CellBound(cfg config.Config, scenario string, s strategy.Strategy, recordsInFlight int, callTimeout time.Duration) Bound {
	p := cfg.Profiles[scenario]
	e := meanCapped(p.Enrichment, callTimeout)
	w := meanCapped(p.Records, callTimeout)
	perRecord := records.EnrichmentSteps*e + w
	b := Bound{EnrichmentCall: e, WriteCall: w}
	b.WriteCapacity = float64(cfg.Records.Workers) / w
	switch {
	case s.SharedPermits > 0:
		// One pool holds a permit for every call of a record.
		b.EnrichmentCapacity = float64(s.SharedPermits) / perRecord
	default:
		enrich := cfg.Enrichment.Workers
		if n := s.PermitsFor(records.Enrichment); n > 0 {
			enrich = min(enrich, n)
		}
		b.EnrichmentCapacity = float64(enrich) / (records.EnrichmentSteps * e)
		if n := s.PermitsFor(records.Records); n > 0 {
			b.WriteCapacity = math.Min(b.WriteCapacity, float64(n)/w)
		}
	}
	b.InFlightCapacity = float64(recordsInFlight) / perRecord
	b.Bound, b.Limit = b.WriteCapacity, BoundByWrites
	if b.EnrichmentCapacity < b.Bound {
		b.Bound, b.Limit = b.EnrichmentCapacity, BoundByEnrichment
	}
	if b.InFlightCapacity < b.Bound {
		b.Bound, b.Limit = b.InFlightCapacity, BoundByRecordsInFlight
	}
	return b
}

// ExpectedLabSeconds is how long a run of cell c should take in lab time:
// the duration of a time-bounded run, else the records at the cell's
// Little's-law bound (with one record in flight where the strategy leaves
// it to the runtime); 0 when the cell has no bound. advised gives the
// strategy "advised" by scenario (nil: none known yet).
func ExpectedLabSeconds(s design.Spec, mockCfg config.Config, c design.Cell, advised map[string]strategy.Strategy) float64 {
	if s.Duration > 0 {
		return s.Duration.Seconds()
	}
	if s.Own != nil {
		return 0 // one's own services: the lab's profiles bound nothing
	}
	st, _ := s.Strategy(c, advised)
	inFlight := max(st.RecordsInFlight, 1)
	n := s.RecordsFor(c)
	if st.RecordsInFlight == strategy.UnboundedInFlight {
		inFlight = n
	}
	b := CellBound(mockCfg, c.Scenario, st, inFlight, s.CallTimeout)
	if !(b.Bound > 0) {
		return 0
	}
	return float64(n) / b.Bound
}
