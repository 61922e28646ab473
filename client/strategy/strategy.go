// Package strategy is how a run bounds its work: the records in flight,
// the budgets that guard each dependency's calls (permits, rates, adaptive
// limits), and retries; the lab's strategies C1–C6, the overrides of
// loadlab run's flags, and strategy files (what loadlab advise writes).
// The records client runs a Strategy; this package only describes one.
package strategy

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Defaults of the lab's strategies.
const (
	DefaultRecordsInFlight  = 32
	DefaultSharedPermits    = 30
	DefaultEnrichPermits    = 24
	DefaultWritePermits     = 6
	RuntimeDefaultInFlight  = 0  // RecordsInFlight: runtime.GOMAXPROCS(0) at run time
	UnboundedInFlight       = -1 // RecordsInFlight: every record at once
	strategyBoundedPrefix   = "bounded:"
	strategyNamesForMessage = "C1, C2, C3, C4, C5-aimd, C5-vegas, C6, C2-retries, sequential, bounded:N, unbounded"
)

// Strategy is how a run bounds its work: how many records are in flight,
// and which budgets guard the calls. A limit of 0 means no limiter there.
type Strategy struct {
	Name string `json:"name"`
	// RecordsInFlight: records processed at once; RuntimeDefaultInFlight
	// (0) uses runtime.GOMAXPROCS(0), UnboundedInFlight (-1) all records.
	RecordsInFlight int `json:"records_in_flight"`
	// SharedPermits is one budget over every outbound call (C3).
	SharedPermits int `json:"shared_permits,omitempty"`
	// Permits and Rates are per-dependency budgets by the pipeline's
	// dependency names (C4's are the lab's enrichment and records): the
	// calls at once, and the calls per lab second (0 or absent: none),
	// each apart from the other.
	Permits map[string]int     `json:"permits,omitempty"`
	Rates   map[string]float64 `json:"rates,omitempty"`
	// Adaptive gives dependencies an adaptive concurrency limit (AIMD or Vegas) in
	// place of fixed permits (C5).
	Adaptive map[string]AdaptiveLimit `json:"adaptive,omitempty"`
	// Retries, when set, tries failed calls again (C6, C2-retries).
	Retries *Retries `json:"retries,omitempty"`
}

// Normalized is the strategy with maps of its own for Permits and
// Rates (empty, not nil), to change without changing s.
func (s Strategy) Normalized() Strategy {
	s.Permits, s.Rates = maps.Clone(s.Permits), maps.Clone(s.Rates)
	if s.Permits == nil {
		s.Permits = map[string]int{}
	}
	if s.Rates == nil {
		s.Rates = map[string]float64{}
	}
	return s
}

// UnmarshalJSON reads a strategy, and the lab's budgets as results files
// before per-dependency maps spelled them (enrichment_permits,
// write_permits, enrichment_rate, write_rate), into Permits and Rates.
func (s *Strategy) UnmarshalJSON(b []byte) error {
	type plain Strategy
	var v struct {
		plain
		EnrichPermits int     `json:"enrichment_permits"`
		WritePermits  int     `json:"write_permits"`
		EnrichRate    float64 `json:"enrichment_rate"`
		WriteRate     float64 `json:"write_rate"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Strategy(v.plain)
	for _, f := range []struct {
		dep string
		n   int
		r   float64
	}{{api.Enrichment, v.EnrichPermits, v.EnrichRate}, {api.Records, v.WritePermits, v.WriteRate}} {
		if _, ok := s.Permits[f.dep]; !ok && f.n != 0 {
			if s.Permits == nil {
				s.Permits = map[string]int{}
			}
			s.Permits[f.dep] = f.n
		}
		if _, ok := s.Rates[f.dep]; !ok && f.r != 0 {
			if s.Rates == nil {
				s.Rates = map[string]float64{}
			}
			s.Rates[f.dep] = f.r
		}
	}
	return nil
}

// PermitsFor is the dependency's own permits (0: none).
func (s Strategy) PermitsFor(dep string) int { return s.Permits[dep] }

// RateFor is the dependency's calls per second (0: no rate limit).
func (s Strategy) RateFor(dep string) float64 { return s.Rates[dep] }

// Fits says whether every budget of the strategy names a dependency of p:
// a *field.Error of the budget ("permits.geo", "rates.geo",
// "adaptive.geo") that does not.
func (s Strategy) Fits(p *pipeline.Pipeline) error {
	for _, budget := range []struct {
		field string
		deps  []string
	}{{"permits", slices.Sorted(maps.Keys(s.Permits))}, {"rates", slices.Sorted(maps.Keys(s.Rates))}, {"adaptive", slices.Sorted(maps.Keys(s.Adaptive))}} {
		for _, dep := range budget.deps {
			if p.Dependency(dep) == nil {
				return field.Errorf(budget.field+"."+dep, "a budget for %q, which pipeline %s (%s) lacks: its dependencies are %s",
					dep, p.Name, p.File, strings.Join(p.Names(), ", "))
			}
		}
	}
	return nil
}

// Parse returns the named strategy with its lab parameters:
//
//	C1          records in flight = runtime.GOMAXPROCS(0), no dependency limiter
//	C2          32 records in flight, no dependency limiter
//	C3          32 in flight, one budget of 30 permits shared by all calls
//	C4          32 in flight, enrichment budget 24, write budget 6
//	C5-aimd     32 in flight, adaptive AIMD limits from C4's budgets: enrichment in [1, 64], writes in [1, 12]
//	C5-vegas    the same with latency-based (Vegas) limits
//	C5          C5-aimd
//	C6          C4 with retries under a budget: 3 attempts, full-jitter backoff 25 ms–1 s,
//	            per dependency 20% of first attempts within 10 s plus 2 per s (lab)
//	C2-retries  C2 with naive retries: 3 attempts, the same backoff, no budget
//	sequential  one record at a time
//	bounded:N   N records in flight
//	unbounded   every record at once
func Parse(name string) (Strategy, error) {
	switch strings.ToUpper(name) {
	case "C1":
		return Strategy{Name: "C1", RecordsInFlight: RuntimeDefaultInFlight}, nil
	case "C2":
		return Strategy{Name: "C2", RecordsInFlight: DefaultRecordsInFlight}, nil
	case "C3":
		return Strategy{Name: "C3", RecordsInFlight: DefaultRecordsInFlight, SharedPermits: DefaultSharedPermits}, nil
	case "C4":
		return Strategy{Name: "C4", RecordsInFlight: DefaultRecordsInFlight, Permits: labPermits()}, nil
	case "C5", "C5-AIMD":
		return Strategy{Name: "C5-aimd", RecordsInFlight: DefaultRecordsInFlight, Adaptive: C5Adaptive(AlgAIMD)}, nil
	case "C5-VEGAS":
		return Strategy{Name: "C5-vegas", RecordsInFlight: DefaultRecordsInFlight, Adaptive: C5Adaptive(AlgVegas)}, nil
	case "C6":
		return Strategy{Name: "C6", RecordsInFlight: DefaultRecordsInFlight, Permits: labPermits(), Retries: LabRetries(true)}, nil
	case "C2-RETRIES":
		return Strategy{Name: "C2-retries", RecordsInFlight: DefaultRecordsInFlight, Retries: LabRetries(false)}, nil
	}
	switch {
	case name == "sequential":
		return Strategy{Name: name, RecordsInFlight: 1}, nil
	case name == "unbounded":
		return Strategy{Name: name, RecordsInFlight: UnboundedInFlight}, nil
	case strings.HasPrefix(name, strategyBoundedPrefix):
		n, err := strconv.Atoi(strings.TrimPrefix(name, strategyBoundedPrefix))
		if err != nil || n < 1 {
			return Strategy{}, fmt.Errorf("strategy %q: N in bounded:N must be a whole number ≥ 1", name)
		}
		return Strategy{Name: name, RecordsInFlight: n}, nil
	}
	return Strategy{}, fmt.Errorf("unknown strategy %q (one of %s)", name, strategyNamesForMessage)
}

// Default is the strategy of a run that names none: C4, whose
// budgets name the lab's dependencies, or C2 for a pipeline that lacks
// them (its budgets come by name).
func Default(p *pipeline.Pipeline) Strategy {
	s, _ := Parse("C4")
	if s.Fits(p) != nil {
		s, _ = Parse("C2")
	}
	return s
}

// labPermits are C4's budgets: the lab's enrichment and records'.
func labPermits() map[string]int {
	return map[string]int{api.Enrichment: DefaultEnrichPermits, api.Records: DefaultWritePermits}
}

// Validate names the first bad field (a *field.Error: "records_in_flight",
// "permits.geo", "adaptive.records", "retries", …).
func (s Strategy) Validate() error {
	switch {
	case s.RecordsInFlight < UnboundedInFlight:
		return field.Errorf("records_in_flight", "%d must be ≥ 1, or 0 for the runtime default, or -1 for unbounded", s.RecordsInFlight)
	case s.SharedPermits < 0:
		return field.Errorf("shared_permits", "%d must be ≥ 1 (or 0 for none)", s.SharedPermits)
	case s.SharedPermits > 0 && len(s.Permits) > 0:
		return field.Errorf("shared_permits", "a shared budget (%d) excludes per-dependency permits", s.SharedPermits)
	}
	for _, dep := range slices.Sorted(maps.Keys(s.Permits)) {
		if s.Permits[dep] < 1 {
			return field.Errorf("permits."+dep, "%d must be ≥ 1", s.Permits[dep])
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(s.Adaptive)) {
		if err := s.Adaptive[dep].Validate(); err != nil {
			return field.Within("adaptive."+dep, err)
		}
		if s.SharedPermits > 0 || s.Permits[dep] > 0 {
			return field.Errorf("adaptive."+dep, "an adaptive limit replaces the dependency's permits: give it no permits and no shared budget")
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(s.Rates)) {
		if r := s.Rates[dep]; !(r > 0) || math.IsInf(r, 0) {
			return field.Errorf("rates."+dep, "%v must be > 0", r)
		}
	}
	return s.Retries.Validate()
}
