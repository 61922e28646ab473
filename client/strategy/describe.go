package strategy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Describe says what a strategy bounds, in words.
func (s Strategy) Describe() string {
	var parts []string
	switch s.RecordsInFlight {
	case RuntimeDefaultInFlight:
		parts = append(parts, "records in flight = GOMAXPROCS")
	case UnboundedInFlight:
		parts = append(parts, "every record at once")
	default:
		parts = append(parts, fmt.Sprintf("%d records in flight", s.RecordsInFlight))
	}
	switch {
	case len(s.Adaptive) > 0:
		var each []string
		for _, dep := range slices.Sorted(maps.Keys(s.Adaptive)) {
			each = append(each, fmt.Sprintf("%s adaptive (%s)", dep, s.Adaptive[dep].Describe()))
		}
		for _, dep := range slices.Sorted(maps.Keys(s.Permits)) {
			each = append(each, fmt.Sprintf("%s %s", dep, permits(s.Permits[dep])))
		}
		parts = append(parts, strings.Join(each, ", "))
	case s.SharedPermits > 0:
		parts = append(parts, fmt.Sprintf("%d permits shared by all calls", s.SharedPermits))
	case len(s.Permits) > 0:
		n := s.Permits
		var each []string
		for _, dep := range slices.Sorted(maps.Keys(n)) {
			each = append(each, fmt.Sprintf("%s %s", dep, permits(n[dep])))
		}
		parts = append(parts, strings.Join(each, ", "))
	default:
		parts = append(parts, "no dependency limiter")
	}
	rates := s.Rates
	for _, dep := range slices.Sorted(maps.Keys(rates)) {
		parts = append(parts, fmt.Sprintf("%s ≤ %g calls per lab second", dep, rates[dep]))
	}
	if s.Retries != nil {
		parts = append(parts, s.Retries.Describe())
	}
	return strings.Join(parts, "; ")
}

func permits(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d permits", n)
}
