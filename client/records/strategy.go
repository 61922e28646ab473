package records

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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
	strategyNamesForMessage = "C1, C2, C3, C4, sequential, bounded:N, unbounded"
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
	// EnrichPermits and WritePermits are per-dependency budgets (C4).
	EnrichPermits int `json:"enrichment_permits,omitempty"`
	WritePermits  int `json:"write_permits,omitempty"`
	// EnrichRate and WriteRate cap calls per second to each dependency
	// (0: none), separately from any permits.
	EnrichRate float64 `json:"enrichment_rate,omitempty"`
	WriteRate  float64 `json:"write_rate,omitempty"`
}

// ParseStrategy returns the named strategy with its lab parameters:
//
//	C1          records in flight = runtime.GOMAXPROCS(0), no dependency limiter
//	C2          32 records in flight, no dependency limiter
//	C3          32 in flight, one budget of 30 permits shared by all calls
//	C4          32 in flight, enrichment budget 24, write budget 6
//	sequential  one record at a time
//	bounded:N   N records in flight
//	unbounded   every record at once
func ParseStrategy(name string) (Strategy, error) {
	switch strings.ToUpper(name) {
	case "C1":
		return Strategy{Name: "C1", RecordsInFlight: RuntimeDefaultInFlight}, nil
	case "C2":
		return Strategy{Name: "C2", RecordsInFlight: DefaultRecordsInFlight}, nil
	case "C3":
		return Strategy{Name: "C3", RecordsInFlight: DefaultRecordsInFlight, SharedPermits: DefaultSharedPermits}, nil
	case "C4":
		return Strategy{Name: "C4", RecordsInFlight: DefaultRecordsInFlight,
			EnrichPermits: DefaultEnrichPermits, WritePermits: DefaultWritePermits}, nil
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

// Validate names the first bad parameter, by its flag in loadlab run.
func (s Strategy) Validate() error {
	switch {
	case s.RecordsInFlight < UnboundedInFlight:
		return fmt.Errorf("records-in-flight: %d must be ≥ 1, or 0 for the runtime default, or -1 for unbounded", s.RecordsInFlight)
	case s.SharedPermits < 0:
		return fmt.Errorf("shared-permits: %d must be ≥ 1 (or 0 for none)", s.SharedPermits)
	case s.EnrichPermits < 0:
		return fmt.Errorf("enrichment-permits: %d must be ≥ 1 (or 0 for none)", s.EnrichPermits)
	case s.WritePermits < 0:
		return fmt.Errorf("write-permits: %d must be ≥ 1 (or 0 for none)", s.WritePermits)
	case s.SharedPermits > 0 && (s.EnrichPermits > 0 || s.WritePermits > 0):
		return fmt.Errorf("shared-permits: a shared budget (%d) excludes per-dependency permits", s.SharedPermits)
	case s.EnrichRate < 0 || math.IsNaN(s.EnrichRate) || math.IsInf(s.EnrichRate, 0):
		return fmt.Errorf("enrichment-rate: %v must be ≥ 0", s.EnrichRate)
	case s.WriteRate < 0 || math.IsNaN(s.WriteRate) || math.IsInf(s.WriteRate, 0):
		return fmt.Errorf("write-rate: %v must be ≥ 0", s.WriteRate)
	}
	return nil
}
