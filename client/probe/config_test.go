package probe

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/field"
)

func TestParseConcurrency(t *testing.T) {
	got, err := ParseConcurrency("1-4, 6,8-8,32")
	if want := []int{1, 2, 3, 4, 6, 8, 32}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "0", "4-2", "x", "1-", "5000", "1,,2"} {
		if _, err := ParseConcurrency(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line", bad, err)
		}
	}
	if got := Ranges([]int{1, 2, 3, 5, 7, 8}); got != "1-3, 5, 7-8" {
		t.Errorf("Ranges: %q", got)
	}
}

// isField reports whether err is a *field.Error about name, in one line
// that starts with the name.
func isField(err error, name string) bool {
	return field.Is(err, name) && strings.HasPrefix(err.Error(), name+": ") && !strings.Contains(err.Error(), "\n")
}

// Every bound is checked, and its error names the field.
func TestValidateNamesTheField(t *testing.T) {
	ok := Default()
	ok.Target = "http://127.0.0.1:8080/records"
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults with a target: %v", err)
	}
	for name, change := range map[string]func(*Config){
		"target":               func(c *Config) { c.Target = "127.0.0.1:8080/records" },
		"method":               func(c *Config) { c.Method = "PO ST" },
		"max_concurrency":      func(c *Config) { c.MaxConcurrency = 0 },
		"max_rate":             func(c *Config) { c.MaxRate = 0 },
		"max_duration":         func(c *Config) { c.MaxDuration = time.Second },
		"step":                 func(c *Config) { c.Step = time.Millisecond },
		"warm_up":              func(c *Config) { c.WarmUp = -time.Second },
		"timeout":              func(c *Config) { c.Timeout = 0 },
		"stop_rejection_ratio": func(c *Config) { c.StopRejectionRatio = 1.5 },
		"stop_error_ratio":     func(c *Config) { c.StopErrorRatio = -1 },
		"stop_p99":             func(c *Config) { c.StopP99 = -time.Second },
		"concurrency":          func(c *Config) { c.Concurrency = []int{1, 65} },
		"ok_statuses":          func(c *Config) { c.OKStatuses = []int{200, 503} },
		"reject_statuses":      func(c *Config) { c.RejectStatuses = []int{99} },
		"body":                 func(c *Config) { c.Body = "{{.ID" },
	} {
		c := ok
		change(&c)
		if err := c.Validate(); !isField(err, name) {
			t.Errorf("%s: error %v, want one line naming it", name, err)
		}
	}
}

// Statuses are read from a comma-separated list; options default the
// method by the body and name the field of bad input; a header is
// "Name: value".
func TestOptions(t *testing.T) {
	ok, err := ParseStatuses("200, 201")
	if err != nil || !slices.Equal(ok, []int{200, 201}) {
		t.Errorf("statuses %v, %v", ok, err)
	}
	for _, bad := range []string{"", "200,x", "5O3", "99", "600"} {
		if _, err := ParseStatuses(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("statuses %q: error %v, want one line", bad, err)
		}
	}
	o := Options{Config: Default()}
	o.Config.Concurrency, o.Config.OKStatuses, o.Config.RejectStatuses = []int{1, 2, 3, 8}, ok, []int{429}
	o.Config.Target, o.Config.Method, o.Config.Body = "http://127.0.0.1:8080/records", "", "{}"
	cfg, err := o.Resolve()
	if err != nil || !slices.Equal(cfg.Concurrency, []int{1, 2, 3, 8}) || !slices.Equal(cfg.OKStatuses, []int{200, 201}) ||
		!slices.Equal(cfg.RejectStatuses, []int{429}) || cfg.Method != "POST" {
		t.Errorf("resolved %+v, %v", cfg, err)
	}
	o.Config.Body = ""
	if cfg, _ := o.Resolve(); cfg.Method != "GET" {
		t.Errorf("no body: method %q, want GET", cfg.Method)
	}
	o.Config.Method = "PUT"
	if cfg, _ := o.Resolve(); cfg.Method != "PUT" {
		t.Errorf("method given: %q, want PUT", cfg.Method)
	}
	for name, change := range map[string]func(*Options){
		"ok_statuses":     func(o *Options) { o.Config.OKStatuses = []int{200, 429} }, // also a rejection
		"reject_statuses": func(o *Options) { o.Config.RejectStatuses = []int{99} },
		"concurrency":     func(o *Options) { o.Config.Concurrency = []int{1, 100} }, // over the max concurrency
		"target":          func(o *Options) { o.Config.Target = "" },
	} {
		bad := o
		change(&bad)
		if _, err := bad.Resolve(); !isField(err, name) {
			t.Errorf("%s: error %v, want one line naming it", name, err)
		}
	}
	// Execute reports bad input before anything is written or sent.
	var out, progress strings.Builder
	o.Config.Target = ""
	if _, err := Execute(t.Context(), o, &out, &progress); !isField(err, "target") || out.Len()+progress.Len() != 0 {
		t.Errorf("Execute: %v, wrote %q and %q", err, out.String(), progress.String())
	}
	var c Config
	if err := c.AddHeader("X-Trace:  a:b "); err != nil || c.Headers.Get("X-Trace") != "a:b" {
		t.Errorf("header %q, %v", c.Headers, err)
	}
	for _, bad := range []string{"no colon", ": v"} {
		if err := c.AddHeader(bad); err == nil {
			t.Errorf("header %q accepted", bad)
		}
	}
}

// The plan says when the steps do not fit in the max duration, and how
// many do.
func TestPlanAgainstMaxDuration(t *testing.T) {
	c := Default()
	c.Target = "http://127.0.0.1:1/"
	p := c.Plan()
	if len(p.Concurrency) != 64 || p.PlannedSeconds != 160 || p.FitSteps != 64 {
		t.Errorf("default plan: %d steps, %v s, %d fit", len(p.Concurrency), p.PlannedSeconds, p.FitSteps)
	}
	c.MaxDuration = time.Minute
	c.Concurrency = []int{8, 1, 2, 2, 4}
	p = c.Plan()
	if !slices.Equal(p.Concurrency, []int{1, 2, 4, 8}) || p.FitSteps != 4 {
		t.Errorf("plan %v, %d fit; want sorted without repeats, all fit", p.Concurrency, p.FitSteps)
	}
	c.Concurrency = nil
	p = c.Plan()
	var b strings.Builder
	if err := WritePlan(&b, p); err != nil {
		t.Fatal(err)
	}
	if p.FitSteps != 24 || !strings.Contains(b.String(), "only the first 24 steps fit (up to concurrency 24)") {
		t.Errorf("%d fit; plan:\n%s", p.FitSteps, b.String())
	}
}

// The fast path renders a body exactly as text/template would, and any
// other template goes through text/template.
func TestBodyMaker(t *testing.T) {
	for _, body := range []string{`{"id":"{{.ID}}","n":{{.Seq}},"complete":true}`, `{{.ID}}-{{printf "%05d" .Seq}}`, `plain`, ``} {
		b, err := newBodyMaker(body, "p-")
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.make(42)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer("{{.ID}}", "p-42", "{{.Seq}}", "42", `{{printf "%05d" .Seq}}`, "00042").Replace(body)
		if string(got) != want {
			t.Errorf("%q: got %q, want %q", body, got, want)
		}
	}
	if b, _ := newBodyMaker(`{{.ID}}`, "p-"); b.parts == nil {
		t.Error("{{.ID}} did not take the fast path")
	}
	if _, err := newBodyMaker(`{{.Missing}}`, "p-"); !isField(err, "body") {
		t.Errorf("a template naming an unknown field: %v", err)
	}
}

// A plan read back from a probe's JSON gives the same probe again, at
// another target: what a check of a copy against its original runs.
func TestPlanGivesTheProbeAgain(t *testing.T) {
	c := Default()
	c.Target, c.Method = "http://127.0.0.1:1/orders", "POST"
	c.Concurrency, c.Step, c.WarmUp = []int{1, 2, 4, 8}, 1500*time.Millisecond, 250*time.Millisecond
	c.StopP99, c.OKStatuses, c.RejectStatuses = 2*time.Second, []int{201}, []int{429}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	again := c.Plan().Config("http://127.0.0.1:2/orders")
	want := c
	want.Target = again.Target
	if !reflect.DeepEqual(again, want) {
		t.Errorf("again\n%+v\nwant\n%+v", again, want)
	}
}
