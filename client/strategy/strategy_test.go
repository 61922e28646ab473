package strategy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/field"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		want Strategy
	}{
		{"C1", Strategy{Name: "C1", RecordsInFlight: RuntimeDefaultInFlight}},
		{"c2", Strategy{Name: "C2", RecordsInFlight: 32}},
		{"C3", Strategy{Name: "C3", RecordsInFlight: 32, SharedPermits: 30}},
		{"C4", Strategy{Name: "C4", RecordsInFlight: 32, Permits: map[string]int{"enrichment": 24, "records": 6}}},
		{"sequential", Strategy{Name: "sequential", RecordsInFlight: 1}},
		{"bounded:8", Strategy{Name: "bounded:8", RecordsInFlight: 8}},
		{"unbounded", Strategy{Name: "unbounded", RecordsInFlight: UnboundedInFlight}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.name)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"C7", "C5-gradient", "bounded:0", "bounded:x", ""} {
		if _, err := Parse(bad); err == nil {
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
		{Strategy{RecordsInFlight: 1, Permits: map[string]int{"records": -1}}, "permits.records"},
		{Strategy{RecordsInFlight: 1, SharedPermits: 30, Permits: map[string]int{"records": 6}}, "shared_permits"},
		{Strategy{RecordsInFlight: 1, Rates: map[string]float64{"enrichment": -3}}, "rates.enrichment"},
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

// Results written before budgets were kept by dependency name read as
// the same strategy: the lab's four fields land in Permits and Rates,
// where a key by name wins; and what is written reads back unchanged.
func TestOlderResultsStillRead(t *testing.T) {
	var old Strategy
	in := `{"name":"C4","records_in_flight":32,"enrichment_permits":24,"write_permits":6,"write_rate":40,"rates":{"records":50}}`
	if err := json.Unmarshal([]byte(in), &old); err != nil {
		t.Fatal(err)
	}
	want := Strategy{Name: "C4", RecordsInFlight: 32, Permits: map[string]int{"enrichment": 24, "records": 6}, Rates: map[string]float64{"records": 50}}
	if !reflect.DeepEqual(old, want) {
		t.Errorf("read %+v, want %+v", old, want)
	}
	c6, _ := Parse("C6")
	b, err := json.Marshal(c6)
	if err != nil {
		t.Fatal(err)
	}
	var back Strategy
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c6) {
		t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, c6)
	}
}

// --adaptive's text: AIMD by default, Vegas by name, off removes a
// dependency's limit; an error names the dependency and the part.
func TestParseAdaptive(t *testing.T) {
	got, err := ParseAdaptive("records=1:6:12, enrichment=vegas:1:24:64:3:6:1:50, geo=off")
	if err != nil {
		t.Fatal(err)
	}
	r, e := got["records"], got["enrichment"]
	if r == nil || r.AIMD == nil || r.AIMD.Floor != 1 || r.AIMD.Initial != 6 || r.AIMD.Ceiling != 12 ||
		e == nil || e.Vegas == nil || e.Vegas.Alpha != 3 || e.Vegas.Window != 50 || got["geo"] != nil || len(got) != 3 {
		t.Errorf("parsed %+v", got)
	}
	for text, want := range map[string]string{"records": `"records" is not dep=`, "records=1:x:12": "records: aimd.initial: \"x\" is not a whole number",
		"records=vegas:1:2": "records: vegas: give FLOOR:INITIAL:CEILING"} {
		if _, err := ParseAdaptive(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
