package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/pipeline"
)

// The lab's file renders the calls the lab's client always made.
func TestLabPipeline(t *testing.T) {
	p := pipeline.Lab()
	if got := strings.Join(p.Names(), ","); got != "enrichment,records" || p.Write() != "records" {
		t.Fatalf("dependencies %s, write %s", got, p.Write())
	}
	if n := p.CallsPerRecord(); n["enrichment"] != 3 || n["records"] != 1 {
		t.Errorf("calls per record %v, want enrichment 3, records 1", n)
	}
	path, body, err := p.Dependency("enrichment").Render(pipeline.Data{ID: `r"1`, Step: 2, Complete: true})
	if err != nil || path != "/enrich" || string(body) != `{"record_id":"r\"1","step":2}` {
		t.Errorf("enrichment renders %q %s, %v", path, body, err)
	}
	_, body, _ = p.Dependency("records").Render(pipeline.Data{ID: "r1", Complete: false})
	if string(body) != `{"id":"r1","complete":false}` {
		t.Errorf("write renders %s", body)
	}
	d := p.Dependency("records")
	if d.Classify(201) != pipeline.Success || d.Classify(503) != pipeline.Rejection || d.Classify(500) != pipeline.Other {
		t.Error("the write's statuses are not judged as the lab's")
	}
}

// Bad input names the file, the line and the field.
func TestPipelineErrorsNameFileLineField(t *testing.T) {
	const good = `name: x
dependencies:
  - name: a
    path: /a
    body: '{"id":{{json .ID}}}'
  - name: b
    path: /b/{{.ID}}
    method: GET
steps:
  - dependency: a
    repeat: 2
  - dependency: b
    required: true
`
	dir := t.TempDir()
	write := func(text string) string {
		f := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p, err := pipeline.Load(write(good))
	if err != nil {
		t.Fatal(err)
	}
	if p.Dependency("a").Method != "POST" || p.Steps[1].Repeat != 1 || p.Write() != "b" {
		t.Errorf("defaults not filled: %+v", p)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown dependency in a step", "  - dependency: b\n", "  - dependency: c\n", `p.yaml:12: steps.1.dependency: unknown dependency "c"`},
		{"template that does not render", "/b/{{.ID}}", "/b/{{.Id}}", "p.yaml:7: dependencies.1.path: "},
		{"template that does not parse", `{{json .ID}}}`, `{{json .ID}`, "p.yaml:5: dependencies.0.body: "},
		{"a path without /", "path: /a", "path: a", "p.yaml:4: dependencies.0.path: "},
		{"a status that is not one", "    method: GET\n", "    method: GET\n    success: [2000]\n", "p.yaml:9: dependencies.1.success: 2000 is not an HTTP status"},
		{"a name twice", "  - name: b\n", "  - name: a\n", "p.yaml:6: dependencies.1.name: "},
		{"an unknown field", "    method: GET\n", "    methd: GET\n", "p.yaml:8: methd: unknown field"},
		{"repeat out of range", "repeat: 2", "repeat: 101", "p.yaml:11: steps.0.repeat: 101 must be in [1, 100]"},
		{"the write not required", "    required: true\n", "", "p.yaml:12: steps.1.required: the last step is the record's write"},
		{"no success status", "    method: GET\n", "    method: GET\n    success: []\n", "p.yaml:9: dependencies.1.success: at least one"},
		{"a template that fails only for incomplete records", "/b/{{.ID}}", "/b/{{if .Complete}}{{.ID}}{{else}}{{.Nope}}{{end}}", "p.yaml:7: dependencies.1.path: step 1, call 1, complete false"},
		{"a template that fails only on a repeat", `{"id":{{json .ID}}}`, `{"id":{{if eq .Step 2}}{{.Nope}}{{end}}}`, "p.yaml:5: dependencies.0.body: step 0, call 2"},
		{"a header template that does not render", "    method: GET\n", "    method: GET\n    headers: {X-Trace: \"{{.Nope}}\"}\n", "p.yaml:9: dependencies.1.headers: "},
		{"a bad header name", "    method: GET\n", "    method: GET\n    headers: {\"X Bad\": v}\n", "p.yaml:9: dependencies.1.headers: \"X Bad\" is not a header name"},
	} {
		_, err := pipeline.Load(write(strings.Replace(good, c.old, c.new, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
