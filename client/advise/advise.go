// Package advise turns capacity probes of a pipeline's dependencies into a
// strategy, by the rules of the write-up the lab comes from: give each
// dependency its own budget at its knee (never past its first rejection);
// the slowest dependency per record bounds the rate; Little's law gives the
// records in flight a target rate needs (rate × time per record), capped
// by what the bottleneck can serve.
package advise

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Capacity is what a probe measured of one dependency (loadlab probe's
// JSON has these fields).
type Capacity struct {
	// ServiceTimeSeconds is the median latency at the lowest concurrency
	// probed (the lowest step's mean, when given, is used instead).
	ServiceTimeSeconds float64 `json:"service_time_seconds"`
	// Knee is the smallest concurrency reaching 95% of the plateau; nil
	// when throughput was still rising at the highest step probed.
	Knee *int `json:"knee"`
	// RejectionsBeginAt is the lowest concurrency that drew a 503/429.
	RejectionsBeginAt *int   `json:"rejections_begin_at"`
	Steps             []Step `json:"steps"`
	// Plan is what the probe was pointed at, and how long it let a
	// request take.
	Plan struct {
		Target         string  `json:"target"`
		TimeoutSeconds float64 `json:"timeout_seconds"`
	} `json:"plan"`
}

// Step is one probed concurrency.
type Step struct {
	Concurrency int     `json:"concurrency"`
	OKPerSecond float64 `json:"ok_per_second"`
	// MeanSeconds is the mean latency of the step's successes.
	MeanSeconds *float64 `json:"mean_seconds"`
	// AtRateLimit: the probe's own --max-rate held the step.
	AtRateLimit bool `json:"at_rate_limit"`
	// The step's requests completed in its window, by how they ended.
	WindowSeconds float64 `json:"window_seconds"`
	Requests      int     `json:"requests"`
	Rejected      int     `json:"rejected"`
	Timeouts      int     `json:"timeouts"`
	Errors        int     `json:"errors"`
	// MaxSeconds is the slowest success.
	MaxSeconds *float64 `json:"max_seconds"`
	// RejectedStatuses counts the rejections by status ("429": 12);
	// RetryAfterSeconds is the longest Retry-After they asked for.
	RejectedStatuses  map[string]int `json:"rejected_statuses"`
	RetryAfterSeconds *float64       `json:"retry_after_seconds"`
}

// Dependency is the advice for one dependency.
type Dependency struct {
	CallsPerRecord int `json:"calls_per_record" yaml:"calls_per_record"`
	Permits        int `json:"permits" yaml:"permits"`
	// PermitsFrom says which rule gave Permits.
	PermitsFrom string `json:"permits_from" yaml:"permits_from"`
	// ServiceTimeSeconds is the mean time of one call at low load.
	ServiceTimeSeconds float64 `json:"service_time_seconds" yaml:"service_time_seconds"`
	// CallsPerSecond is the measured successes per second at Permits (the
	// probe's step at, or the highest below, that concurrency).
	CallsPerSecond float64 `json:"calls_per_second" yaml:"calls_per_second"`
	// RecordsPerSecond is CallsPerSecond / CallsPerRecord: the rate this
	// dependency allows.
	RecordsPerSecond float64 `json:"records_per_second" yaml:"records_per_second"`
	Limits           `yaml:",inline"`
}

// Advice is a strategy and how it was reached.
type Advice struct {
	Pipeline string `json:"pipeline" yaml:"pipeline"`
	// TargetRate is what was asked for (0: as fast as the bottleneck
	// allows); PlannedRate what the records in flight are sized for.
	TargetRate  float64 `json:"target_rate_per_second" yaml:"target_rate_per_second"`
	PlannedRate float64 `json:"planned_rate_per_second" yaml:"planned_rate_per_second"`
	// TimePerRecord is the sum of every call's mean time at low load.
	TimePerRecord float64 `json:"time_per_record_seconds" yaml:"time_per_record_seconds"`
	Bottleneck    string  `json:"bottleneck" yaml:"bottleneck"`
	// RateBound is the bottleneck's records per second.
	RateBound       float64               `json:"rate_bound_per_second" yaml:"rate_bound_per_second"`
	RecordsInFlight int                   `json:"records_in_flight" yaml:"records_in_flight"`
	Dependencies    map[string]Dependency `json:"dependencies" yaml:"dependencies"`
	Run             RunLimits             `json:"run" yaml:"run"`
	Warnings        []string              `json:"warnings" yaml:"warnings"`
}

// Advise computes the advice for p from a probe of each of its
// dependencies, for targetRate records per second (0: the bottleneck's
// rate). Rates are in the probes' time (real seconds against a mock
// service at a time scale: a run at the same scale).
func Advise(p *pipeline.Pipeline, probes map[string]Capacity, targetRate float64) (Advice, error) {
	if targetRate < 0 || math.IsNaN(targetRate) || math.IsInf(targetRate, 0) {
		return Advice{}, fmt.Errorf("target rate %v must be ≥ 0 (0: as fast as the bottleneck allows)", targetRate)
	}
	a := Advice{Pipeline: p.File, TargetRate: targetRate, Dependencies: map[string]Dependency{}, Warnings: []string{},
		RateBound: math.Inf(1)}
	calls := p.CallsPerRecord()
	for _, name := range p.Names() {
		if calls[name] == 0 {
			continue // in the file, in no step
		}
		c, ok := probes[name]
		if !ok {
			return Advice{}, fmt.Errorf("no probe of dependency %q of pipeline %s (its dependencies: %s)%s", name, p.Name,
				strings.Join(p.Names(), ", "), unknownProbes(probes, p))
		}
		d, warn, err := advise(name, c)
		if err != nil {
			return Advice{}, err
		}
		warn = append(warn, d.limit(name, c)...)
		if w := pathMismatch(p.Dependency(name), c.Plan.Target); w != "" {
			warn = append(warn, w)
		}
		a.Warnings = append(a.Warnings, warn...)
		d.CallsPerRecord = calls[name]
		d.RecordsPerSecond = d.CallsPerSecond / float64(d.CallsPerRecord)
		a.Dependencies[name] = d
		a.TimePerRecord += float64(d.CallsPerRecord) * d.ServiceTimeSeconds
		if d.RecordsPerSecond < a.RateBound {
			a.RateBound, a.Bottleneck = d.RecordsPerSecond, name
		}
	}
	for name := range probes {
		if p.Dependency(name) == nil {
			return Advice{}, fmt.Errorf("a probe of %q, which pipeline %s lacks", name, p.Name)
		}
	}
	a.PlannedRate = a.RateBound
	if targetRate > 0 && targetRate < a.RateBound {
		a.PlannedRate = targetRate
	}
	if targetRate > a.RateBound {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the target rate %.4g records/s exceeds what %s allows (%.4g records/s at %d permits): the records in flight are sized for %.4g",
			targetRate, a.Bottleneck, a.RateBound, a.Dependencies[a.Bottleneck].Permits, a.RateBound))
	}
	a.RecordsInFlight = max(1, int(math.Ceil(a.PlannedRate*a.TimePerRecord-1e-9)))
	a.Run = runLimits(a)
	return a, nil
}

// advise gives one dependency its permits and the rate measured there.
func advise(name string, c Capacity) (Dependency, []string, error) {
	steps := slices.Clone(c.Steps)
	slices.SortFunc(steps, func(x, y Step) int { return x.Concurrency - y.Concurrency })
	if len(steps) == 0 || !(c.ServiceTimeSeconds > 0) {
		return Dependency{}, nil, fmt.Errorf("%s: the probe has no steps or no service time", name)
	}
	var warn []string
	// Little's law takes the mean time of a call: the lowest step's mean
	// (of its successes) when the probe measured one.
	d := Dependency{ServiceTimeSeconds: c.ServiceTimeSeconds}
	if m := steps[0].MeanSeconds; m != nil && *m > 0 {
		d.ServiceTimeSeconds = *m
	}
	rejected := c.RejectionsBeginAt != nil
	switch {
	case c.Knee != nil:
		d.Permits, d.PermitsFrom = *c.Knee, "the knee"
	case rejected:
		// No knee before it refused: its limit is where refusals begin,
		// and the budget stays below it (next).
		d.Permits = steps[len(steps)-1].Concurrency
	default:
		d.Permits = steps[len(steps)-1].Concurrency
		d.PermitsFrom = "no knee: the highest concurrency probed"
		warn = append(warn, fmt.Sprintf("%s: no knee up to %d: its budget is the highest concurrency probed, and the rate measured there bounds it "+
			"(a lower bound on what %s can take; probing further may allow more)", name, d.Permits, name))
	}
	if rb := c.RejectionsBeginAt; rejected && d.Permits >= *rb {
		// The highest step probed below the first rejection: between it and
		// the rejection nothing was measured.
		below := 0
		for _, s := range steps {
			if s.Concurrency < *rb {
				below = s.Concurrency
			}
		}
		switch {
		case below < 1 && c.refusedByRate():
			// Its rate, not its permits, will keep it from refusing.
			d.Permits, d.PermitsFrom = steps[0].Concurrency, "the lowest concurrency probed"
		case below < 1:
			return Dependency{}, nil, fmt.Errorf("%s: rejections began at concurrency %d, the lowest probed: no budget avoids them", name, *rb)
		default:
			d.Permits, d.PermitsFrom = below, "the highest concurrency probed below the first rejection"
		}
	}
	for _, s := range steps {
		if s.Concurrency <= d.Permits {
			d.CallsPerSecond = s.OKPerSecond
			if s.AtRateLimit {
				warn = append(warn, fmt.Sprintf("%s: the probe's --max-rate held its step at concurrency %d: the rate there, and any knee, are the probe's limit, not %s's; probe again with a higher --max-rate",
					name, s.Concurrency, name))
			}
		}
	}
	if !(d.CallsPerSecond > 0) {
		return Dependency{}, nil, errors.New(name + ": no successes measured at or below its permits")
	}
	return d, warn, nil
}

// Strategy is the advice as a strategy file's strategy: the permits, and a
// rate for each dependency that refused by rate; the timeouts and retries
// it suggests are the run's (Advice.Run), not the strategy's.
func (a Advice) Strategy(name string) strategy.FileStrategy {
	f := strategy.FileStrategy{Name: name, RecordsInFlight: a.RecordsInFlight, Permits: map[string]int{}}
	for dep, d := range a.Dependencies {
		f.Permits[dep] = d.Permits
		if d.RatePerSecond > 0 {
			if f.Rates == nil {
				f.Rates = map[string]float64{}
			}
			f.Rates[dep] = d.RatePerSecond
		}
	}
	return f
}

// File is the strategy file for the advice: a comment saying where it came
// from, the strategy (what a run reads) and the advice (kept for readers).
func (a Advice) File(name, comment string) ([]byte, error) {
	body, err := yaml.Marshal(struct {
		Strategy strategy.FileStrategy `yaml:"strategy"`
		Advice   Advice                `yaml:"advice"`
	}{a.Strategy(name), a})
	if err != nil {
		return nil, err
	}
	var head strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		head.WriteString("# " + line + "\n")
	}
	return append([]byte(head.String()), body...), nil
}

// pathMismatch warns when a probe was pointed at another path than the
// dependency's (a probe given to the wrong dependency, say).
func pathMismatch(d *pipeline.Dependency, target string) string {
	u, err := url.Parse(target)
	if target == "" || err != nil {
		return ""
	}
	path, _, err := d.Render(pipeline.Data{ID: "x", Step: 1, Complete: true})
	if err != nil || strings.Contains(d.Path, "{{") {
		return "" // a path made of record fields has no one path to compare
	}
	if path, _, _ = strings.Cut(path, "?"); u.Path != path {
		return fmt.Sprintf("%s: its probe was of %s, and its calls go to path %s: is it the right probe?", d.Name, target, path)
	}
	return ""
}

// unknownProbes says which probes name no dependency of p: with the lab's
// pipeline, that --pipeline names one's own (", and the probes of lookup,
// ledger are of none of them: give your pipeline with --pipeline FILE");
// with one's own, the dependency each probe's name is closest to ("; --probe
// order=… (did you mean orders?) names none of them").
func unknownProbes(probes map[string]Capacity, p *pipeline.Pipeline) string {
	var none []string
	for name := range probes {
		if p.Dependency(name) == nil {
			none = append(none, name)
		}
	}
	if len(none) == 0 {
		return ""
	}
	slices.Sort(none)
	if p.File == pipeline.LabFile && !slices.ContainsFunc(none, func(n string) bool { return field.Closest(n, p.Names()) != "" }) {
		return fmt.Sprintf("; the probes of %s are of none of them: give your pipeline with --pipeline FILE", strings.Join(none, ", "))
	}
	var hints []string
	for _, name := range none {
		h := "--probe " + name + "=…"
		if c := field.Closest(name, p.Names()); c != "" {
			h += " (did you mean " + c + "?)"
		}
		hints = append(hints, h)
	}
	return fmt.Sprintf("; %s names none of them", strings.Join(hints, ", "))
}
