// Package design reads what an experiment is before anything runs: the
// experiment file (its matrix of strategies, scenarios and client CPU
// settings, the phased scenarios it defines or names, of package phases'
// types, how the strategy "advised" is made) and the hypotheses
// preregistered for it, with the lock that fixes them. Every error names
// the file, the line and the field. It runs nothing and judges nothing.
package design

import (
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/experiments/phases"
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
	Strategies    StrategyList  `yaml:"strategies" json:"strategies"`
	Scenarios     ScenarioList  `yaml:"scenarios" json:"scenarios"`
	CPUs          []CPUSetting  `yaml:"cpus" json:"cpus"`
	Exclude       []Exclude     `yaml:"exclude" json:"exclude,omitempty"`
	// Duration, when > 0, bounds every run in lab time as well as by
	// Records: records keep coming until it has passed. Phased scenarios
	// need it, and their phases add up to it.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// PhasedScenarios are the experiment's own scenarios whose conditions
	// change during a run (the built-in ones, write-capacity-drop and
	// enrichment-brownout, need no entry).
	PhasedScenarios map[string]phases.PhasedScenario `yaml:"phased,omitempty" json:"phased,omitempty"`
	// Advise is how the strategy "advised" is made: before the matrix, the
	// runner probes each dependency of the lab's pipeline under each
	// scenario's profile and advises a strategy per scenario.
	Advise *AdviseSpec `yaml:"advise,omitempty" json:"advise,omitempty"`
	// Batches give cells other records per run than Records: the first
	// batch whose lists all match a cell (as Exclude's do) gives its
	// records.
	Batches []Batch `yaml:"batches,omitempty" json:"batches,omitempty"`
	// Calibration is how the time-scale bias of what is judged is
	// measured (nil: Pairs DefaultCalibrationPairs, MaxBias
	// DefaultMaxBias, every cell a time-biased hypothesis reads).
	Calibration *CalibrationSpec `yaml:"calibration,omitempty" json:"calibration,omitempty"`
	// RealTime are the cells (matched as Exclude's lists match) that run
	// at time scale 1 whatever TimeScale: fast cells whose rates a time
	// scale biases most, and which cost little in real time.
	RealTime []Exclude `yaml:"real_time,omitempty" json:"real_time,omitempty"`
	// Pipeline, when set, makes it an experiment on one's own services: a
	// pipeline file (relative to the experiment file) whose records run
	// against virtual copies of its dependencies, each fitted from the
	// probe Virtual names; the scenarios are as-probed or change the
	// copies (Changes), and StrategyFiles are strategies of one's own by
	// name. Own is what those files held, as loaded.
	Pipeline      string                               `yaml:"pipeline,omitempty" json:"pipeline,omitempty"`
	Virtual       map[string]VirtualSpec               `yaml:"virtual,omitempty" json:"virtual,omitempty"`
	StrategyFiles map[string]string                    `yaml:"strategy_files,omitempty" json:"strategy_files,omitempty"`
	Changes       map[string]map[string]own.CopyChange `yaml:"-" json:"changes,omitempty"`
	// inline are the strategies given inline in Strategies, by name, as
	// read (loadOwn checks them into Own.Strategies).
	inline map[string]inlineStrategy
	Own    *own.Own `yaml:"-" json:"own,omitempty"`
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
// scenario's strategy in advised (ok false when there is none).
func (s Spec) Strategy(c Cell, advised map[string]strategy.Strategy) (strategy.Strategy, bool) {
	if c.Strategy == Advised {
		a, ok := advised[c.Scenario]
		if !ok {
			return strategy.Strategy{Name: Advised}, false
		}
		return a, true
	}
	if st, ok := s.Own.Strategy(c.Strategy); ok {
		return st, true
	}
	st, err := strategy.Parse(c.Strategy)
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

// MockConfig is the configuration of the mock service an experiment runs
// against: the lab's, with the experiment's seed and time scale. It is
// the source of each cell's bound, so loadlab check and merge use it too.
func (s Spec) MockConfig() config.Config {
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = s.Seed, s.TimeScale
	return cfg
}
