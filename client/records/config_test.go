package records_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
)

// TestConfigJSONRoundTrips: a Config is how the experiment runner hands a
// child process its run, so everything a run is made of survives JSON:
// the strategy with adaptive limits and retries, the pipeline, phases,
// the start and the calls' URLs.
func TestConfigJSONRoundTrips(t *testing.T) {
	s, err := strategy.Parse("C5-aimd")
	if err != nil {
		t.Fatal(err)
	}
	s.Retries = strategy.LabRetries(true)
	s.Rates = map[string]float64{"records": 120.5}
	in := records.DefaultConfig()
	in.Strategy, in.Pipeline = s, pipeline.Lab()
	in.Records, in.TimeScale, in.RunID, in.Reset = 1234, 0.1, "C6-healthy-cpus-1-3-", false
	in.SampleInterval, in.Duration = 2*time.Millisecond, 40*time.Second
	in.Phases = []records.Phase{{Name: "before", Duration: 10 * time.Second}, {Name: "drop", Duration: 30 * time.Second}}
	in.StartAt = time.Date(2026, 12, 7, 10, 0, 0, 123456789, time.UTC)
	in.CallURLs = map[string]string{"enrichment": "http://127.0.0.1:1", "records": "http://127.0.0.1:2"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out records.Config
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !out.StartAt.Equal(in.StartAt) {
		t.Errorf("start %v, sent %v", out.StartAt, in.StartAt)
	}
	out.StartAt = in.StartAt
	if out.Pipeline.Dependency("records") == nil {
		t.Fatalf("the decoded pipeline has no dependency records: %+v", out.Pipeline)
	}
	if _, _, err := out.Pipeline.Dependency("records").Render(pipeline.Data{ID: "r-1", Complete: true}); err != nil {
		t.Errorf("the decoded pipeline cannot render a call: %v", err)
	}
	// Its templates, compiled as it is decoded, are compared by what they render.
	got, _ := json.Marshal(out.Pipeline)
	if sent, _ := json.Marshal(in.Pipeline); string(got) != string(sent) {
		t.Errorf("pipeline decoded as %s, sent %s", got, sent)
	}
	out.Pipeline = in.Pipeline
	if !reflect.DeepEqual(out, in) {
		t.Errorf("decoded\n%+v\nsent\n%+v\n(JSON %s)", out, in, b)
	}
	if err := out.Validate(); err != nil {
		t.Errorf("the decoded run: %v", err)
	}
}
