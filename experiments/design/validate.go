package design

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// FileError is a problem in an experiment or hypotheses file, with where
// it is: the file, the line and the field.
type FileError = yamlfile.Error

// loc is where a problem is, from one list of keys and indexes: the field
// as an error names it ("strategies[1]", or with dotted indexes
// "phased.drop.phases.1.set") and the path to its line in the YAML
// document, which may start elsewhere (a built-in phased scenario has no
// lines of its own: its errors point at the scenario's name).
type loc struct {
	field string
	line  []any
	// dotted writes indexes as ".1" rather than "[1]".
	dotted bool
}

// at is the location of the document's keys and indexes parts.
func at(parts ...any) loc { return loc{}.in(parts...) }

// in is the location of parts within l.
func (l loc) in(parts ...any) loc {
	out := loc{field: l.field, line: append(slices.Clone(l.line), parts...), dotted: l.dotted}
	for _, p := range parts {
		if i, ok := p.(int); ok && !l.dotted {
			out.field += fmt.Sprintf("[%d]", i)
			continue
		}
		if out.field != "" {
			out.field += "."
		}
		out.field += fmt.Sprint(p)
	}
	return out
}

// problem is a validation failure at a location.
type problem struct {
	at  loc
	err error
}

// fail is the problem err at l.
func fail(l loc, err error) *problem { return &problem{at: l, err: err} }

// failf is the problem of the formatted message at l.
func failf(l loc, format string, a ...any) *problem { return fail(l, fmt.Errorf(format, a...)) }

// located is the problem as a file's error.
func (p *problem) located(file string, root *yaml.Node) error {
	return &FileError{File: file, Line: yamlfile.Line(root, p.at.line...), Field: p.at.field, Err: p.err}
}

// LoadSpec reads and validates an experiment file. Errors name the file,
// the line and the field.
func LoadSpec(path string) (Spec, error) {
	return loadSpec(OS, path)
}

func loadSpec(files Files, path string) (Spec, error) {
	var s Spec
	root, err := readYAML(files, path, &s)
	if err != nil {
		return s, err
	}
	if p := s.readChanges(root); p != nil {
		return s, p.located(path, root)
	}
	if p := s.readInline(root); p != nil {
		return s, p.located(path, root)
	}
	if s.Pipeline != "" {
		if files != OS {
			return s, fail(at("pipeline"), errors.New("an experiment on one's own services is read from the file system")).located(path, root)
		}
		if p := s.loadOwn(path); p != nil {
			return s, p.located(path, root)
		}
	}
	if p := s.validate(); p != nil {
		return s, p.located(path, root)
	}
	if s.Advise != nil && s.Advise.File != "" {
		if _, err := strategy.LoadFile(s.Advise.File, pipeline.Lab()); err != nil {
			return s, fail(at("advise", "file"), err).located(path, root)
		}
	}
	return s, nil
}

// readYAML decodes path, read from files, strictly into v (yamlfile.Read
// for any Files).
func readYAML(files Files, path string, v any) (*yaml.Node, error) {
	data, err := files.ReadFile(path)
	if err != nil {
		return nil, &FileError{File: path, Err: err}
	}
	return yamlfile.Decode(path, data, v)
}

// Validate checks the spec; an error names the field.
func (s Spec) Validate() error {
	if p := s.validate(); p != nil {
		return p.fieldError()
	}
	return nil
}

// validate finds the spec's first problem.
func (s Spec) validate() *problem {
	for _, check := range []func() *problem{s.validateRun, s.validateOwn, s.validateStrategies, s.validateAdvise,
		s.validatePhasedScenarios, s.validateScenarios, s.validateCPUs, s.validateExclude, s.validateBatches, s.validateCalibration, s.validateRealTime} {
		if p := check(); p != nil {
			return p
		}
	}
	if len(s.Cells()) == 0 {
		return fail(at("exclude"), errors.New("every cell is excluded"))
	}
	return nil
}

// validateRun checks the settings of every run: records, runs, time
// scale, timeouts, duration, and that the matrix has each dimension.
func (s Spec) validateRun() *problem {
	switch {
	case s.Records < 1 || s.Records > records.MaxRecords:
		return failf(at("records"), "%d must be in [1, %d]", s.Records, records.MaxRecords)
	case s.Runs < MinRuns || s.Runs > MaxRuns:
		return failf(at("runs"), "%d must be in [%d, %d] (a range over fewer runs is not a range)", s.Runs, MinRuns, MaxRuns)
	case api.CheckTimeScale(s.TimeScale) != nil:
		return fail(at("time_scale"), api.CheckTimeScale(s.TimeScale))
	case s.CallTimeout <= 0:
		return failf(at("call_timeout"), "%v must be > 0", s.CallTimeout)
	case s.PermitTimeout <= 0:
		return failf(at("permit_timeout"), "%v must be > 0", s.PermitTimeout)
	case len(s.Strategies) == 0:
		return fail(at("strategies"), errors.New("at least one is needed"))
	case len(s.Scenarios) == 0:
		return fail(at("scenarios"), errors.New("at least one is needed"))
	case len(s.CPUs) == 0:
		return fail(at("cpus"), errors.New("at least one is needed"))
	}
	return nil
}

// validateStrategies checks every strategy's name.
func (s Spec) validateStrategies() *problem {
	for i, st := range s.Strategies {
		if st == Advised {
			if s.Advise == nil {
				return fail(at("strategies", i), errors.New(`"advised" needs an advise section`))
			}
			continue
		}
		if _, ok := s.Own.Strategy(st); ok {
			continue
		}
		parsed, err := strategy.Parse(st)
		if err != nil {
			return fail(at("strategies", i), err)
		}
		if s.Own != nil {
			if err := parsed.Fits(s.Own.Pipeline); err != nil {
				return failf(at("strategies", i), "%s: %v; on one's own pipeline run C1, C2, C3, advised or a strategy file named in strategy_files", st, err)
			}
		}
	}
	return nil
}

// validateAdvise checks how the strategy "advised" is made: the target
// rate, the probes' steps, and a probe for every dependency of the lab's
// pipeline (an advise.file is checked when it is loaded).
func (s Spec) validateAdvise() *problem {
	a := s.Advise
	if a == nil || a.File != "" {
		return nil
	}
	switch {
	case a.TargetRate < 0 || math.IsNaN(a.TargetRate) || math.IsInf(a.TargetRate, 0):
		return failf(at("advise", "target_rate"), "%v must be ≥ 0 (0: as fast as the bottleneck allows)", a.TargetRate)
	case a.Step <= 0:
		return failf(at("advise", "step"), "%v must be > 0", a.Step)
	case a.WarmUp < 0:
		return failf(at("advise", "warm_up"), "%v must be ≥ 0", a.WarmUp)
	}
	lab := s.PipelineOf()
	for _, dep := range lab.Names() {
		p, ok := a.Probes[dep]
		if !ok {
			return failf(at("advise", "probes"), "no probe for %s (the pipeline's dependencies: %s)", dep, strings.Join(lab.Names(), ", "))
		}
		if pr := p.validate(at("advise", "probes", dep)); pr != nil {
			return pr
		}
	}
	for dep := range a.Probes {
		if lab.Dependency(dep) == nil {
			return failf(at("advise", "probes", dep), "not a dependency of the pipeline %s (%s)", lab.Name, strings.Join(lab.Names(), ", "))
		}
	}
	return nil
}

// validate checks one dependency's probe as loadlab probe would.
func (p ProbeSpec) validate(l loc) *problem {
	if len(p.Concurrency) == 0 || !slices.IsSorted(p.Concurrency) || p.Concurrency[0] < 1 || p.Concurrency[len(p.Concurrency)-1] > probe.MaxConcurrencyLimit {
		return failf(l.in("concurrency"), "give rising concurrencies in [1, %d]", probe.MaxConcurrencyLimit)
	}
	if p.StopErrorRatio < 0 || p.StopErrorRatio > 1 {
		return failf(l.in("stop_error_ratio"), "%v must be in [0, 1] (0: the probe's default)", p.StopErrorRatio)
	}
	cfg := probe.Default()
	cfg.Target, cfg.Body, cfg.Concurrency, cfg.MaxConcurrency = "http://127.0.0.1/", p.Body, p.Concurrency, p.Concurrency[len(p.Concurrency)-1]
	if err := cfg.Validate(); err != nil {
		return fail(l.in("body"), err)
	}
	return nil
}

// validatePhasedScenarios checks the duration and the file's own phased
// scenarios.
func (s Spec) validatePhasedScenarios() *problem {
	if s.Duration < 0 {
		return failf(at("duration"), "%v must be ≥ 0 (0: runs bounded by records alone)", s.Duration)
	}
	if s.Own != nil {
		return nil // validateOwn's
	}
	profiles := config.Default().Profiles
	for _, name := range slices.Sorted(maps.Keys(s.PhasedScenarios)) {
		if _, ok := profiles[name]; ok {
			return failf(at("phased", name), "%q is a profile's name: give the phased scenario another", name)
		}
		if p := s.validatePhased(name, s.PhasedScenarios[name], []any{"phased", name}); p != nil {
			return p
		}
	}
	return nil
}

// validateScenarios checks that every scenario is a profile or a phased
// scenario, and each phased one the matrix runs.
func (s Spec) validateScenarios() *problem {
	if s.Own != nil {
		return nil // validateOwn's
	}
	profiles := config.Default().Profiles
	for i, sc := range s.Scenarios {
		_, profile := profiles[sc]
		p, phased := s.Phased(sc)
		switch {
		case !profile && !phased:
			return failf(at("scenarios", i), "unknown scenario %q (a profile: %s; or a phased scenario: %s)", sc,
				strings.Join(config.Default().ProfileNames(), ", "), strings.Join(s.phasedNames(), ", "))
		case phased:
			if p := s.validatePhased(sc, p, []any{"scenarios", i}); p != nil {
				return p
			}
		}
	}
	return nil
}

// validateCPUs checks the CPU settings: named once each, exactly one limit.
func (s Spec) validateCPUs() *problem {
	seen := map[string]bool{}
	for i, c := range s.CPUs {
		switch {
		case c.Name == "":
			return fail(at("cpus", i).named(at("cpus", i, "name").field), errors.New("missing"))
		case seen[c.Name]:
			return failf(at("cpus", i, "name"), "%q is used twice", c.Name)
		case c.CPUs < 0 || c.Cpuset < 0 || b2i(c.CPUs > 0)+b2i(c.Cpuset > 0)+b2i(c.Inherit) != 1:
			return fail(at("cpus", i), errors.New("give exactly one of cpus (a quota, > 0), cpuset (a number of CPUs, ≥ 1) or inherit: true"))
		}
		seen[c.Name] = true
	}
	return nil
}

// validateExclude checks that every exclusion names the matrix's own
// strategies, scenarios and CPU settings.
func (s Spec) validateExclude() *problem {
	for i, e := range s.Exclude {
		if p := s.validateLists(at("exclude", i), e.Strategies, e.Scenarios, e.CPUs); p != nil {
			return p
		}
	}
	return nil
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
