// Package pipeline describes, in a YAML file, what one record does: the
// dependencies it calls (where, how, and which answers mean success,
// rejection or a retryable failure) and the steps of one record in order.
// The lab's pipeline (three enrichment calls, then one write) is
// client/pipeline/lab.yaml; a user's own services are another file.
//
// A record runs its steps in order. A call that does not succeed ends its
// step's remaining repeats. If the step is optional the record goes on,
// marked incomplete (the lab's enrichment); if it is required the record
// ends there in the state the call's outcome gives (the lab's write). The
// last step's dependency is the record's write: its 201 and 200 answers
// are counted as stored and duplicate, to reconcile with the server.
package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// Defaults of a dependency's answers.
var (
	DefaultSuccess   = []int{200, 201, 202, 204}
	DefaultRejection = []int{429, 503}
)

// MaxRepeat bounds a step's repeats, MaxSteps a pipeline's calls per record.
const (
	MaxRepeat = 100
	MaxCalls  = 1000
)

// Pipeline is one file.
type Pipeline struct {
	Name         string       `yaml:"name" json:"name"`
	Dependencies []Dependency `yaml:"dependencies" json:"dependencies"`
	Steps        []Step       `yaml:"steps" json:"steps"`
	// File is where it was read from (not in the YAML).
	File string `yaml:"-" json:"file,omitempty"`
}

// Dependency is one service a record calls.
type Dependency struct {
	// Name names the dependency in steps, budgets, metrics and results.
	Name string `yaml:"name" json:"name"`
	// BaseURL is the service's base URL; empty: the run's --target.
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// Method is the HTTP method (default POST).
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Path and Body are text/template templates over Data.
	Path string `yaml:"path" json:"path"`
	Body string `yaml:"body,omitempty" json:"body,omitempty"`
	// Headers are sent with every call, their values templates like the
	// body's; Content-Type defaults to application/json when there is a
	// body.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// Success, Rejection and Retryable are HTTP statuses. Any other answer
	// is an error. Retryable is validated and recorded only: with retries
	// on (loadlab run --retries, C6), every rejection, call timeout and
	// transport error is retried, whatever it says.
	Success   []int `yaml:"success,omitempty" json:"success"`
	Rejection []int `yaml:"rejection,omitempty" json:"rejection"`
	Retryable []int `yaml:"retryable,omitempty" json:"retryable,omitempty"`

	path, body *template.Template
	headers    map[string]*template.Template
}

// Step is one step of a record: Repeat calls to Dependency in sequence.
type Step struct {
	Dependency string `yaml:"dependency" json:"dependency"`
	Repeat     int    `yaml:"repeat,omitempty" json:"repeat"`
	// Required: a failed call fails the record; otherwise it marks the
	// record incomplete and the record goes on.
	Required bool `yaml:"required,omitempty" json:"required"`
}

// Data is what a template sees: {{.ID}}, {{.Index}}, {{.Step}},
// {{.Complete}}, and {{json .ID}} for the id as a JSON string.
type Data struct {
	ID       string // the record's id
	Index    int    // the record's number in the run, from 0
	Step     int    // the call's number within its step, from 1
	Complete bool   // every optional call so far succeeded
}

// Load reads and validates a pipeline file.
func Load(path string) (*Pipeline, error) {
	var p Pipeline
	root, err := yamlfile.Read(path, &p)
	if err != nil {
		return nil, err
	}
	return finish(&p, path, root)
}

// Parse validates a pipeline held in memory; file names it in errors.
func Parse(file string, data []byte) (*Pipeline, error) {
	var p Pipeline
	root, err := yamlfile.Decode(file, data, &p)
	if err != nil {
		return nil, err
	}
	return finish(&p, file, root)
}

func finish(p *Pipeline, file string, root *yaml.Node) (*Pipeline, error) {
	p.File = file
	fail := func(err error, path ...any) error {
		field := ""
		for _, x := range path {
			if field != "" {
				field += "."
			}
			field += fmt.Sprint(x)
		}
		return &yamlfile.Error{File: file, Line: yamlfile.Line(root, path...), Field: field, Err: err}
	}
	if p.Name == "" {
		return nil, fail(errors.New("missing"), "name")
	}
	if len(p.Dependencies) == 0 {
		return nil, fail(errors.New("at least one dependency"), "dependencies")
	}
	seen := map[string]bool{}
	for i := range p.Dependencies {
		d := &p.Dependencies[i]
		at := func(f string) []any { return []any{"dependencies", i, f} }
		if err := d.finish(); err != nil {
			var fe fieldErr
			if errors.As(err, &fe) {
				return nil, fail(fe.err, at(fe.field)...)
			}
			return nil, fail(err, "dependencies", i)
		}
		if seen[d.Name] {
			return nil, fail(fmt.Errorf("%q named twice", d.Name), at("name")...)
		}
		seen[d.Name] = true
	}
	if len(p.Steps) == 0 {
		return nil, fail(errors.New("at least one step"), "steps")
	}
	calls := 0
	for i := range p.Steps {
		s := &p.Steps[i]
		if !seen[s.Dependency] {
			return nil, fail(fmt.Errorf("unknown dependency %q (one of %s)", s.Dependency, strings.Join(p.Names(), ", ")), "steps", i, "dependency")
		}
		if s.Repeat == 0 {
			s.Repeat = 1
		}
		if s.Repeat < 1 || s.Repeat > MaxRepeat {
			return nil, fail(fmt.Errorf("%d must be in [1, %d]", s.Repeat, MaxRepeat), "steps", i, "repeat")
		}
		calls += s.Repeat
	}
	if calls > MaxCalls {
		return nil, fail(fmt.Errorf("%d calls per record, at most %d", calls, MaxCalls), "steps")
	}
	if last := len(p.Steps) - 1; !p.Steps[last].Required {
		return nil, fail(errors.New("the last step is the record's write and must be required: true"), "steps", last, "required")
	}
	// Render every call a record can make (each repeat, complete or not),
	// so that a template that cannot render fails here, not mid-run.
	for i, s := range p.Steps {
		d := p.Dependency(s.Dependency)
		for n := 1; n <= s.Repeat; n++ {
			for _, complete := range []bool{true, false} {
				data := Data{ID: "sample-00001", Index: 1, Step: n, Complete: complete}
				_, _, err := d.Render(data)
				if err == nil {
					_, err = d.RenderHeaders(data)
				}
				if err != nil {
					return nil, fail(fmt.Errorf("step %d, call %d, complete %v: %w", i, n, complete, err), "dependencies", slices.Index(p.Names(), d.Name), fieldOf(err))
				}
			}
		}
	}
	return p, nil
}

// fieldOf is the field a render error is in.
func fieldOf(err error) string {
	var fe fieldErr
	if errors.As(err, &fe) {
		return fe.field
	}
	return ""
}

type fieldErr struct {
	field string
	err   error
}

func (e fieldErr) Error() string { return e.field + ": " + e.err.Error() }

// finish checks a dependency, fills its defaults and parses its templates,
// rendering them once with sample data so that a template that cannot
// render fails at load, not mid-run.
func (d *Dependency) finish() error {
	if d.Name == "" || strings.ContainsAny(d.Name, " \t\n\"{}") {
		return fieldErr{"name", fmt.Errorf("%q must be a non-empty word", d.Name)}
	}
	if d.Method == "" {
		d.Method = http.MethodPost
	}
	if d.Method != strings.ToUpper(d.Method) || strings.ContainsAny(d.Method, " /") {
		return fieldErr{"method", fmt.Errorf("%q is not an HTTP method", d.Method)}
	}
	if d.BaseURL != "" {
		if u, err := url.Parse(d.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr{"base_url", fmt.Errorf("%q is not an http(s) URL", d.BaseURL)}
		}
	}
	if !strings.HasPrefix(d.Path, "/") {
		return fieldErr{"path", fmt.Errorf("%q must start with /", d.Path)}
	}
	var err error
	if d.path, err = parse(d.Name+".path", d.Path); err != nil {
		return fieldErr{"path", err}
	}
	if d.body, err = parse(d.Name+".body", d.Body); err != nil {
		return fieldErr{"body", err}
	}
	if d.Success == nil {
		d.Success = slices.Clone(DefaultSuccess)
	}
	if d.Rejection == nil {
		d.Rejection = slices.Clone(DefaultRejection)
	}
	for _, f := range []struct {
		name string
		s    []int
	}{{"success", d.Success}, {"rejection", d.Rejection}, {"retryable", d.Retryable}} {
		for _, c := range f.s {
			if c < 100 || c > 599 {
				return fieldErr{f.name, fmt.Errorf("%d is not an HTTP status", c)}
			}
		}
	}
	if len(d.Success) == 0 {
		return fieldErr{"success", errors.New("at least one status must mean success")}
	}
	for _, c := range d.Success {
		if slices.Contains(d.Rejection, c) {
			return fieldErr{"rejection", fmt.Errorf("%d is also a success", c)}
		}
		if slices.Contains(d.Retryable, c) {
			return fieldErr{"retryable", fmt.Errorf("%d is also a success", c)}
		}
	}
	for k, v := range d.Headers {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) }) {
			return fieldErr{"headers", fmt.Errorf("%q is not a header name", k)}
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fieldErr{"headers", fmt.Errorf("the value of %s holds a line break or NUL", k)}
		}
		t, err := parse(d.Name+".headers."+k, v)
		if err != nil {
			return fieldErr{"headers", err}
		}
		if d.headers == nil {
			d.headers = map[string]*template.Template{}
		}
		d.headers[k] = t
	}
	sample := Data{ID: "sample-00001", Index: 1, Step: 1, Complete: true}
	if _, _, err := d.Render(sample); err != nil {
		return err
	}
	return nil
}

// TemplateFuncs are the templates' functions, here and in loadlab probe's
// bodies: json writes a value as JSON (a string quoted and escaped), for
// ids inside JSON bodies.
var TemplateFuncs = template.FuncMap{"json": func(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}}

func parse(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(TemplateFuncs).Option("missingkey=error").Parse(text)
}

// RenderHeaders returns the call's headers for one record's call.
func (d *Dependency) RenderHeaders(data Data) (map[string]string, error) {
	if len(d.headers) == 0 {
		return nil, nil // the common case, on every call: nothing to allocate
	}
	out := make(map[string]string, len(d.headers))
	var b bytes.Buffer
	for k, t := range d.headers {
		b.Reset()
		if err := t.Execute(&b, data); err != nil {
			return nil, fieldErr{"headers", err}
		}
		if strings.ContainsAny(b.String(), "\r\n\x00") {
			return nil, fieldErr{"headers", fmt.Errorf("the value of %s renders a line break or NUL", k)}
		}
		out[k] = b.String()
	}
	return out, nil
}

// Render returns the call's path and body for one record's call.
func (d *Dependency) Render(data Data) (path string, body []byte, err error) {
	var b bytes.Buffer
	if err := d.path.Execute(&b, data); err != nil {
		return "", nil, fieldErr{"path", err}
	}
	path = b.String()
	b.Reset()
	if err := d.body.Execute(&b, data); err != nil {
		return "", nil, fieldErr{"body", err}
	}
	return path, b.Bytes(), nil
}

// Outcome classifies an HTTP status for this dependency.
type Outcome int

const (
	Success Outcome = iota
	Rejection
	Other
)

// Classify says what status means for this dependency.
func (d *Dependency) Classify(status int) Outcome {
	switch {
	case slices.Contains(d.Success, status):
		return Success
	case slices.Contains(d.Rejection, status):
		return Rejection
	}
	return Other
}

// Names lists the dependencies' names in file order.
func (p *Pipeline) Names() []string {
	names := make([]string, len(p.Dependencies))
	for i, d := range p.Dependencies {
		names[i] = d.Name
	}
	return names
}

// Dependency returns the named dependency, or nil.
func (p *Pipeline) Dependency(name string) *Dependency {
	for i := range p.Dependencies {
		if p.Dependencies[i].Name == name {
			return &p.Dependencies[i]
		}
	}
	return nil
}

// Write is the dependency of the last step: the record's write.
func (p *Pipeline) Write() string { return p.Steps[len(p.Steps)-1].Dependency }

// CallsPerRecord counts each dependency's calls in a record that succeeds
// throughout.
func (p *Pipeline) CallsPerRecord() map[string]int {
	n := map[string]int{}
	for _, s := range p.Steps {
		n[s.Dependency] += s.Repeat
	}
	return n
}
