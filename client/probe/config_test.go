package probe

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseConcurrency(t *testing.T) {
	got, err := ParseConcurrency("1-4, 6,8-8,32")
	if want := []int{1, 2, 3, 4, 6, 8, 32}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "0", "4-2", "x", "1-", "5000", "1,,2"} {
		if _, err := ParseConcurrency(bad); err == nil || !strings.HasPrefix(err.Error(), "--concurrency: ") {
			t.Errorf("%q: error %v, want one naming --concurrency", bad, err)
		}
	}
	if got := Ranges([]int{1, 2, 3, 5, 7, 8}); got != "1-3, 5, 7-8" {
		t.Errorf("Ranges: %q", got)
	}
}

// Every bound is checked, and its error names the flag.
func TestValidateNamesTheFlag(t *testing.T) {
	ok := Default()
	ok.Target = "http://127.0.0.1:8080/records"
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults with a target: %v", err)
	}
	for flag, change := range map[string]func(*Config){
		"--target":               func(c *Config) { c.Target = "127.0.0.1:8080/records" },
		"--method":               func(c *Config) { c.Method = "PO ST" },
		"--max-concurrency":      func(c *Config) { c.MaxConcurrency = 0 },
		"--max-rate":             func(c *Config) { c.MaxRate = 0 },
		"--max-duration":         func(c *Config) { c.MaxDuration = time.Second },
		"--step":                 func(c *Config) { c.Step = time.Millisecond },
		"--warm-up":              func(c *Config) { c.WarmUp = -time.Second },
		"--timeout":              func(c *Config) { c.Timeout = 0 },
		"--stop-rejection-ratio": func(c *Config) { c.StopRejectionRatio = 1.5 },
		"--stop-error-ratio":     func(c *Config) { c.StopErrorRatio = -1 },
		"--stop-p99":             func(c *Config) { c.StopP99 = -time.Second },
		"--concurrency":          func(c *Config) { c.Concurrency = []int{1, 65} },
		"--ok-status":            func(c *Config) { c.OKStatuses = []int{200, 503} },
		"--body":                 func(c *Config) { c.Body = "{{.ID" },
	} {
		c := ok
		change(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), flag+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming it", flag, err)
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
	if _, err := newBodyMaker(`{{.Missing}}`, "p-"); err == nil || !strings.HasPrefix(err.Error(), "--body: ") {
		t.Errorf("a template naming an unknown field: %v", err)
	}
}
