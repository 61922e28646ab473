// Package experiments runs the replication matrix: every strategy, scenario
// and client CPU setting, several runs per cell, each client run a child
// process under a real CPU limit, against the mock service, with the server's
// figures scraped from /metrics. It computes medians and ranges and a
// Little's-law bound per cell, judges preregistered hypotheses, and writes
// results.json, report.md and report.html.
package experiments

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// MinRuns and MaxRuns bound the runs per cell.
const (
	MinRuns = 3
	MaxRuns = 1000
)

// Spec is an experiment file.
type Spec struct {
	Name          string        `yaml:"name" json:"name"`
	Records       int           `yaml:"records" json:"records"`
	Runs          int           `yaml:"runs" json:"runs"`
	TimeScale     float64       `yaml:"time_scale" json:"time_scale"`
	CallTimeout   time.Duration `yaml:"call_timeout" json:"call_timeout"`
	PermitTimeout time.Duration `yaml:"permit_timeout" json:"permit_timeout"`
	Seed          uint32        `yaml:"seed" json:"seed"`
	Strategies    []string      `yaml:"strategies" json:"strategies"`
	Scenarios     []string      `yaml:"scenarios" json:"scenarios"`
	CPUs          []CPUSetting  `yaml:"cpus" json:"cpus"`
	Exclude       []Exclude     `yaml:"exclude" json:"exclude,omitempty"`
	// Duration, when > 0, bounds every run in lab time as well as by
	// Records: records keep coming until it has passed. Phased scenarios
	// need it, and their phases add up to it.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// PhasedScenarios are the experiment's own scenarios whose conditions
	// change during a run (the built-in ones, write-capacity-drop and
	// enrichment-brownout, need no entry).
	PhasedScenarios map[string]PhasedScenario `yaml:"phased,omitempty" json:"phased,omitempty"`
	// Advise is how the strategy "advised" is made: before the matrix, the
	// runner probes each dependency of the lab's pipeline under each
	// scenario's profile and advises a strategy per scenario.
	Advise *AdviseSpec `yaml:"advise,omitempty" json:"advise,omitempty"`
}

// Advised is the strategy name whose cells run what loadlab advise gives
// for their scenario.
const Advised = "advised"

// AdviseSpec is the probing and advice behind the strategy "advised".
type AdviseSpec struct {
	// TargetRate is in records per lab second; 0: as fast as the
	// bottleneck allows.
	TargetRate float64 `yaml:"target_rate" json:"target_rate"`
	// Step and WarmUp are each probe step's measured and warm-up time, in
	// lab time (times the time scale in real time).
	Step   time.Duration `yaml:"step" json:"step"`
	WarmUp time.Duration `yaml:"warm_up" json:"warm_up"`
	// Probes gives, per dependency of the lab's pipeline, the concurrency
	// steps to probe.
	Probes map[string]ProbeSpec `yaml:"probes" json:"probes"`
	// File, when set, is a strategy file (loadlab advise's, or written by
	// hand) that the advised cells run under every scenario instead of
	// probing; the other fields are then not used. A path relative to the
	// working directory.
	File string `yaml:"file,omitempty" json:"file,omitempty"`
}

// ProbeSpec is one dependency's probe: the concurrency steps, the body
// template (loadlab probe's: {{.ID}} is unique per request), and the
// fraction of errors and timeouts that stops it (0: probe's default).
type ProbeSpec struct {
	Concurrency    []int   `yaml:"concurrency" json:"concurrency"`
	Body           string  `yaml:"body" json:"body"`
	StopErrorRatio float64 `yaml:"stop_error_ratio,omitempty" json:"stop_error_ratio,omitempty"`
}

// Strategy resolves a cell's strategy: a named one, or for "advised" the
// scenario's advice (ok false when there is none).
func (s Spec) Strategy(c Cell, advised map[string]*AdvisedStrategy) (records.Strategy, bool) {
	if c.Strategy == Advised {
		a, ok := advised[c.Scenario]
		if !ok || a == nil {
			return records.Strategy{Name: Advised}, false
		}
		return a.Strategy.Strategy(), true
	}
	st, err := records.ParseStrategy(c.Strategy)
	return st, err == nil
}

// CPUSetting is one client CPU limit: a quota of CPUs (like docker --cpus),
// an affinity to Cpuset CPUs (like docker --cpuset-cpus), or Inherit: no
// limit of the runner's own, the one the runner runs under (a container's).
type CPUSetting struct {
	Name    string  `yaml:"name" json:"name"`
	CPUs    float64 `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	Cpuset  int     `yaml:"cpuset,omitempty" json:"cpuset,omitempty"`
	Inherit bool    `yaml:"inherit,omitempty" json:"inherit,omitempty"`
}

// Limit is the setting as the cpulimit package takes it.
func (c CPUSetting) Limit() cpulimit.Setting {
	return cpulimit.Setting{CPUs: c.CPUs, Cpuset: c.Cpuset, Inherit: c.Inherit}
}

// Exclude removes the cells that match all of its non-empty lists.
type Exclude struct {
	Strategies []string `yaml:"strategies" json:"strategies,omitempty"`
	Scenarios  []string `yaml:"scenarios" json:"scenarios,omitempty"`
	CPUs       []string `yaml:"cpus" json:"cpus,omitempty"`
}

// Cell is one combination of the matrix.
type Cell struct {
	Strategy string `yaml:"strategy" json:"strategy"`
	Scenario string `yaml:"scenario" json:"scenario"`
	CPU      string `yaml:"cpu" json:"cpu"`
}

func (c Cell) String() string { return c.Strategy + "/" + c.Scenario + "/" + c.CPU }

func (e Exclude) matches(c Cell) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(e.Strategies, c.Strategy) && in(e.Scenarios, c.Scenario) && in(e.CPUs, c.CPU)
}

// Cells lists the matrix in run order: CPU setting, scenario, strategy.
func (s Spec) Cells() []Cell {
	var out []Cell
	for _, cpu := range s.CPUs {
		for _, sc := range s.Scenarios {
			for _, st := range s.Strategies {
				c := Cell{Strategy: st, Scenario: sc, CPU: cpu.Name}
				if !slices.ContainsFunc(s.Exclude, func(e Exclude) bool { return e.matches(c) }) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// CPU returns the setting called name.
func (s Spec) CPU(name string) (CPUSetting, bool) {
	i := slices.IndexFunc(s.CPUs, func(c CPUSetting) bool { return c.Name == name })
	if i < 0 {
		return CPUSetting{}, false
	}
	return s.CPUs[i], true
}

// LoadSpec reads and validates an experiment file. Errors name the file,
// the line and the field.
func LoadSpec(path string) (Spec, error) {
	var s Spec
	root, err := readYAML(path, &s)
	if err != nil {
		return s, err
	}
	if field, at, err := s.validate(); err != nil {
		return s, &FileError{File: path, Line: lineOf(root, at...), Field: field, Err: err}
	}
	if s.Advise != nil && s.Advise.File != "" {
		if _, err := records.LoadStrategyFile(s.Advise.File, pipeline.Lab()); err != nil {
			return s, &FileError{File: path, Line: lineOf(root, "advise", "file"), Field: "advise.file", Err: err}
		}
	}
	return s, nil
}

// Validate checks the spec.
func (s Spec) Validate() error {
	if field, _, err := s.validate(); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func (s Spec) validate() (field string, at []any, err error) {
	profiles := config.Default().Profiles
	switch {
	case s.Records < 1 || s.Records > records.MaxRecords:
		return "records", []any{"records"}, fmt.Errorf("%d must be in [1, %d]", s.Records, records.MaxRecords)
	case s.Runs < MinRuns || s.Runs > MaxRuns:
		return "runs", []any{"runs"}, fmt.Errorf("%d must be in [%d, %d] (a range over fewer runs is not a range)", s.Runs, MinRuns, MaxRuns)
	case api.CheckTimeScale(s.TimeScale) != nil:
		return "time_scale", []any{"time_scale"}, api.CheckTimeScale(s.TimeScale)
	case s.CallTimeout <= 0:
		return "call_timeout", []any{"call_timeout"}, fmt.Errorf("%v must be > 0", s.CallTimeout)
	case s.PermitTimeout <= 0:
		return "permit_timeout", []any{"permit_timeout"}, fmt.Errorf("%v must be > 0", s.PermitTimeout)
	case len(s.Strategies) == 0:
		return "strategies", []any{"strategies"}, errors.New("at least one is needed")
	case len(s.Scenarios) == 0:
		return "scenarios", []any{"scenarios"}, errors.New("at least one is needed")
	case len(s.CPUs) == 0:
		return "cpus", []any{"cpus"}, errors.New("at least one is needed")
	}
	for i, st := range s.Strategies {
		if st == Advised {
			if s.Advise == nil {
				return fmt.Sprintf("strategies[%d]", i), []any{"strategies", i}, errors.New(`"advised" needs an advise section`)
			}
			continue
		}
		if _, err := records.ParseStrategy(st); err != nil {
			return fmt.Sprintf("strategies[%d]", i), []any{"strategies", i}, err
		}
	}
	if a := s.Advise; a != nil && a.File == "" {
		lab := pipeline.Lab()
		switch {
		case a.TargetRate < 0 || math.IsNaN(a.TargetRate) || math.IsInf(a.TargetRate, 0):
			return "advise.target_rate", []any{"advise", "target_rate"}, fmt.Errorf("%v must be ≥ 0 (0: as fast as the bottleneck allows)", a.TargetRate)
		case a.Step <= 0:
			return "advise.step", []any{"advise", "step"}, fmt.Errorf("%v must be > 0", a.Step)
		case a.WarmUp < 0:
			return "advise.warm_up", []any{"advise", "warm_up"}, fmt.Errorf("%v must be ≥ 0", a.WarmUp)
		}
		for _, dep := range lab.Names() {
			p, ok := a.Probes[dep]
			if !ok {
				return "advise.probes", []any{"advise", "probes"}, fmt.Errorf("no probe for %s (the lab's dependencies: %s)", dep, strings.Join(lab.Names(), ", "))
			}
			at := func(f string) (string, []any) {
				return "advise.probes." + dep + "." + f, []any{"advise", "probes", dep, f}
			}
			if len(p.Concurrency) == 0 || !slices.IsSorted(p.Concurrency) || p.Concurrency[0] < 1 || p.Concurrency[len(p.Concurrency)-1] > probe.MaxConcurrencyLimit {
				f, l := at("concurrency")
				return f, l, fmt.Errorf("give rising concurrencies in [1, %d]", probe.MaxConcurrencyLimit)
			}
			if p.StopErrorRatio < 0 || p.StopErrorRatio > 1 {
				f, l := at("stop_error_ratio")
				return f, l, fmt.Errorf("%v must be in [0, 1] (0: the probe's default)", p.StopErrorRatio)
			}
			cfg := probe.Default()
			cfg.Target, cfg.Body, cfg.Concurrency, cfg.MaxConcurrency = "http://127.0.0.1/", p.Body, p.Concurrency, p.Concurrency[len(p.Concurrency)-1]
			if err := cfg.Validate(); err != nil {
				f, l := at("body")
				return f, l, err
			}
		}
		for dep := range a.Probes {
			if lab.Dependency(dep) == nil {
				return "advise.probes." + dep, []any{"advise", "probes", dep}, fmt.Errorf("not a dependency of the lab's pipeline (%s)", strings.Join(lab.Names(), ", "))
			}
		}
	}
	if s.Duration < 0 {
		return "duration", []any{"duration"}, fmt.Errorf("%v must be ≥ 0 (0: runs bounded by records alone)", s.Duration)
	}
	for _, name := range slices.Sorted(maps.Keys(s.PhasedScenarios)) {
		if _, ok := profiles[name]; ok {
			return "phased." + name, []any{"phased", name}, fmt.Errorf("%q is a profile's name: give the phased scenario another", name)
		}
		if field, at, err := s.validatePhased(name, s.PhasedScenarios[name], []any{"phased", name}); err != nil {
			return field, at, err
		}
	}
	for i, sc := range s.Scenarios {
		_, profile := profiles[sc]
		p, phased := s.Phased(sc)
		switch {
		case !profile && !phased:
			return fmt.Sprintf("scenarios[%d]", i), []any{"scenarios", i},
				fmt.Errorf("unknown scenario %q (a profile: %s; or a phased scenario: %s)", sc,
					strings.Join(config.Default().ProfileNames(), ", "), strings.Join(s.phasedNames(), ", "))
		case phased:
			if field, at, err := s.validatePhased(sc, p, []any{"scenarios", i}); err != nil {
				return field, at, err
			}
		}
	}
	seen := map[string]bool{}
	for i, c := range s.CPUs {
		switch {
		case c.Name == "":
			return fmt.Sprintf("cpus[%d].name", i), []any{"cpus", i}, errors.New("missing")
		case seen[c.Name]:
			return fmt.Sprintf("cpus[%d].name", i), []any{"cpus", i, "name"}, fmt.Errorf("%q is used twice", c.Name)
		case c.CPUs < 0 || c.Cpuset < 0 || b2i(c.CPUs > 0)+b2i(c.Cpuset > 0)+b2i(c.Inherit) != 1:
			return fmt.Sprintf("cpus[%d]", i), []any{"cpus", i}, errors.New("give exactly one of cpus (a quota, > 0), cpuset (a number of CPUs, ≥ 1) or inherit: true")
		}
		seen[c.Name] = true
	}
	for i, e := range s.Exclude {
		for _, check := range []struct {
			key   string
			vals  []string
			known []string
		}{{"strategies", e.Strategies, s.Strategies}, {"scenarios", e.Scenarios, s.Scenarios}, {"cpus", e.CPUs, names(s.CPUs)}} {
			for j, v := range check.vals {
				if !slices.Contains(check.known, v) {
					return fmt.Sprintf("exclude[%d].%s[%d]", i, check.key, j), []any{"exclude", i, check.key, j},
						fmt.Errorf("%q is not in the experiment's %s", v, check.key)
				}
			}
		}
	}
	if len(s.Cells()) == 0 {
		return "exclude", []any{"exclude"}, errors.New("every cell is excluded")
	}
	return "", nil, nil
}

func names(cpus []CPUSetting) []string {
	out := make([]string, len(cpus))
	for i, c := range cpus {
		out[i] = c.Name
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
