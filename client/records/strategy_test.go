package records

import (
	"reflect"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/field"
)

func TestParseStrategy(t *testing.T) {
	tests := []struct {
		name string
		want Strategy
	}{
		{"C1", Strategy{Name: "C1", RecordsInFlight: RuntimeDefaultInFlight}},
		{"c2", Strategy{Name: "C2", RecordsInFlight: 32}},
		{"C3", Strategy{Name: "C3", RecordsInFlight: 32, SharedPermits: 30}},
		{"C4", Strategy{Name: "C4", RecordsInFlight: 32, EnrichPermits: 24, WritePermits: 6}},
		{"sequential", Strategy{Name: "sequential", RecordsInFlight: 1}},
		{"bounded:8", Strategy{Name: "bounded:8", RecordsInFlight: 8}},
		{"unbounded", Strategy{Name: "unbounded", RecordsInFlight: UnboundedInFlight}},
	}
	for _, tt := range tests {
		got, err := ParseStrategy(tt.name)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"C7", "C5-gradient", "bounded:0", "bounded:x", ""} {
		if _, err := ParseStrategy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestStrategyValidation(t *testing.T) {
	tests := []struct {
		s    Strategy
		want string
	}{
		{Strategy{RecordsInFlight: -2}, "records_in_flight"},
		{Strategy{RecordsInFlight: 1, WritePermits: -1}, "write_permits"},
		{Strategy{RecordsInFlight: 1, SharedPermits: 30, WritePermits: 6}, "shared_permits"},
		{Strategy{RecordsInFlight: 1, EnrichRate: -3}, "enrichment_rate"},
		{Strategy{RecordsInFlight: 1, Permits: map[string]int{"geo": 0}}, "permits.geo"},
		{Strategy{RecordsInFlight: 1, Retries: &Retries{}}, "retries"},
	}
	for _, tt := range tests {
		fe, ok := field.Of(tt.s.Validate())
		if !ok || fe.Field != tt.want {
			t.Errorf("%+v: got %v, want an error naming the field %s", tt.s, fe, tt.want)
		}
	}
}

// Record ids go into paths unescaped: a run id that is not URL-safe is
// refused before anything is sent.
func TestRunIDMustBeURLSafe(t *testing.T) {
	cfg := DefaultConfig()
	for _, id := range []string{"a b", "x/y", "q?", "h#", "20261201T070000.000-", "C4-slow-write-cpus-1-1-", "bounded:8-"} {
		cfg.RunID = id
		err := cfg.Validate()
		if safe := !strings.ContainsAny(id, " /?#"); (err == nil) != safe {
			t.Errorf("run id %q: %v", id, err)
		}
	}
}
