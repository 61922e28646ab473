// Package starter writes a starter experiment on one's own services and
// its hypotheses, from a pipeline and a probe of each dependency, for the
// user to edit and lock (loadlab experiment --init).
package starter

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/virtualcopy"
	"github.com/loadlab/loadlab/experiments/design"
)

// Paths are where a starter experiment's files are, as its
// experiment file names them (relative to it): the pipeline, and each
// dependency's probe by name.
type Paths struct {
	Pipeline string
	Probes   map[string]string
}

// Files are a starter experiment on one's own services, and its
// hypotheses, for the user to edit and lock: every dependency against a
// virtual copy fitted from its probe; the scenarios as-probed and, for
// each dependency, one three times as slow and one with half its
// workers (half its rate, for a copy fitted with a token bucket); C2 against the strategy advised from probes of the copies
// (each probed at the concurrencies its own probe stepped through). The
// hypotheses claim what a budget is for — the advised strategy draws no
// write refusals as probed nor in any scenario — and that it accepts at
// least C2's rate as probed; each is a claim to test, not a finding.
func Files(name string, p *pipeline.Pipeline, probes map[string]probe.Result, at Paths) (experiment, hypotheses string, err error) {
	timeout := callTimeout(probes)
	var b strings.Builder
	fmt.Fprintf(&b, "# A starter experiment on %s: edit it, then lock its hypotheses with\n", p.Name)
	fmt.Fprintf(&b, "# loadlab preregister before the first run. Times are lab seconds; at\n")
	fmt.Fprintf(&b, "# time_scale 0.1 every copy runs ten times faster than its original.\n")
	fmt.Fprintf(&b, "name: %s\npipeline: %s\nvirtual:\n", name, quote(at.Pipeline))
	for _, d := range p.Names() {
		file, ok := at.Probes[d]
		if !ok {
			return "", "", fmt.Errorf("no probe of %s (the pipeline's dependencies: %s)", d, strings.Join(p.Names(), ", "))
		}
		fmt.Fprintf(&b, "  %s: {probe: %s}\n", d, quote(file))
	}
	fmt.Fprintf(&b, "records: 200\nruns: 5\ntime_scale: 0.1\n# ten times the slowest success a probe saw, and at least 2 s: a call past\n"+
		"# it is a write of unknown outcome, which a copy (no store) cannot resolve\ncall_timeout: %v\npermit_timeout: %v\nseed: 1\n", timeout, 5*timeout)
	b.WriteString("strategies: [C2, advised]\nscenarios:\n  - " + design.AsProbed + "\n")
	for _, d := range p.Names() {
		name, change := smaller(d, probes[d])
		fmt.Fprintf(&b, "  - name: slow-%s\n    %s: {service_time: 3}\n  - name: %s\n    %s: %s\n", d, d, name, d, change)
	}
	b.WriteString("cpus:\n  - {name: cpus-1, cpus: 1}\nadvise:\n  target_rate: 0\n  step: 2s\n  warm_up: 500ms\n  probes:\n")
	for _, d := range p.Names() {
		var steps []string
		for _, s := range probes[d].Steps {
			steps = append(steps, fmt.Sprint(s.Concurrency))
		}
		if len(steps) == 0 {
			return "", "", fmt.Errorf("the probe of %s has no step", d)
		}
		fmt.Fprintf(&b, "    %s:\n      concurrency: [%s]\n", d, strings.Join(steps, ", "))
		if body := p.Dependency(d).Body; body != "" {
			fmt.Fprintf(&b, "      body: %s\n", quote(body))
		}
	}
	return b.String(), starterHypotheses(p, probes), nil
}

// smaller is the scenario of dependency d with less capacity, and its
// change: half the rate of a copy its probe fits with a token bucket
// (whose workers are only enough for the users the probe ran), else half
// the workers.
func smaller(d string, r probe.Result) (name, change string) {
	if c, err := virtualcopy.Fit(d, r, virtualcopy.Options{}); err == nil && c.Rate != nil {
		return "half-rate-" + d, "{rate: 0.5}"
	}
	return "half-" + d, "{workers: 0.5}"
}

// callTimeout is ten times the slowest success any probe saw (a scenario
// three times as slow, and a queue's waits, stay within it), in whole
// seconds, and at least the lab's 2 s.
func callTimeout(probes map[string]probe.Result) time.Duration {
	slowest := 0.0
	for _, r := range probes {
		for _, st := range r.Steps {
			if st.MaxSeconds != nil {
				slowest = max(slowest, *st.MaxSeconds)
			}
		}
	}
	return max(2*time.Second, time.Duration(math.Ceil(10*slowest))*time.Second)
}

// starterHypotheses are Files's claims.
func starterHypotheses(p *pipeline.Pipeline, probes map[string]probe.Result) string {
	var b strings.Builder
	b.WriteString("# Claims to test, not findings: edit them, then loadlab preregister.\nrules: paired-v3\nhypotheses:\n")
	claim := func(id, text, metric, op, threshold, scenario, versus string) {
		fmt.Fprintf(&b, "  - id: %s\n    claim: %s\n    source: a starter of loadlab experiment --init\n    metric: %s\n", id, text, metric)
		fmt.Fprintf(&b, "    cell: {strategy: advised, scenario: %s, cpu: cpus-1}\n", scenario)
		if versus != "" {
			fmt.Fprintf(&b, "    versus: {strategy: %s, scenario: %s, cpu: cpus-1}\n    compare: ratio\n", versus, scenario)
		}
		fmt.Fprintf(&b, "    op: %q\n    threshold: %s\n", op, threshold)
	}
	claim("A1", "The advised strategy draws no write refusals from the services as probed.", "write_rejections", "==", "0", design.AsProbed, "")
	claim("A2", "The advised strategy accepts at least as many records per second as C2 from the services as probed.", "accepted_per_second", ">=", "1", design.AsProbed, "C2")
	scenarios := []string{}
	for _, d := range p.Names() {
		name, _ := smaller(d, probes[d])
		scenarios = append(scenarios, "slow-"+d, name)
	}
	for i, sc := range slices.Sorted(slices.Values(scenarios)) {
		claim(fmt.Sprintf("A%d", i+3), fmt.Sprintf("Advised for %s, the strategy draws no write refusals there.", sc), "write_rejections", "==", "0", sc, "")
	}
	return b.String()
}

// quote is s as a YAML single-quoted scalar.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
