package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/pipeline"
)

// TestPipelineFromJSON: a pipeline decoded from JSON is checked and its
// templates compiled as Load does: it renders, and a bad one is refused
// naming the field.
func TestPipelineFromJSON(t *testing.T) {
	b, err := json.Marshal(pipeline.Lab())
	if err != nil {
		t.Fatal(err)
	}
	var p pipeline.Pipeline
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	path, _, err := p.Dependency("enrichment").Render(pipeline.Data{ID: "r-1", Step: 2})
	if err != nil || path != "/enrich" {
		t.Errorf("rendered %q, %v; want /enrich", path, err)
	}
	bad := strings.Replace(string(b), `"required":true`, `"required":false`, 1)
	if err := json.Unmarshal([]byte(bad), &p); err == nil || !strings.Contains(err.Error(), "must be required: true") {
		t.Errorf("a pipeline whose write is optional decoded with %v", err)
	}
}
