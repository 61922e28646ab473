package strategy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// File is a strategy written down as configuration (what loadlab
// advise writes, and what loadlab run --strategy-file and an experiment's
// strategy "advised" read): the strategy itself, and the advice it came
// from, kept for the reader and ignored by the run.
type File struct {
	Strategy FileStrategy   `yaml:"strategy" json:"strategy"`
	Advice   map[string]any `yaml:"advice,omitempty" json:"advice,omitempty"`
}

// FileStrategy is a strategy's fields as a file spells them.
type FileStrategy struct {
	Name            string             `yaml:"name" json:"name"`
	RecordsInFlight int                `yaml:"records_in_flight" json:"records_in_flight"`
	SharedPermits   int                `yaml:"shared_permits,omitempty" json:"shared_permits,omitempty"`
	Permits         map[string]int     `yaml:"permits,omitempty" json:"permits,omitempty"`
	Rates           map[string]float64 `yaml:"rates,omitempty" json:"rates,omitempty"`
	// Adaptive and Retries as the Strategy's (adaptive: {records: {vegas:
	// {...}}}; retries: {attempts, base_backoff, max_backoff, budget}).
	Adaptive map[string]AdaptiveLimit `yaml:"adaptive,omitempty" json:"adaptive,omitempty"`
	Retries  *Retries                 `yaml:"retries,omitempty" json:"retries,omitempty"`
}

// Strategy is the file's strategy as a run takes it.
func (f FileStrategy) Strategy() Strategy {
	return Strategy{Name: f.Name, RecordsInFlight: f.RecordsInFlight, SharedPermits: f.SharedPermits,
		Permits: maps.Clone(f.Permits), Rates: maps.Clone(f.Rates), Adaptive: maps.Clone(f.Adaptive), Retries: f.Retries}
}

// LoadFile reads a strategy file and checks it against the
// pipeline it will run: an error names the file, the line and the field.
func LoadFile(path string, p *pipeline.Pipeline) (Strategy, error) {
	var f File
	root, err := yamlfile.Read(path, &f)
	if err != nil {
		return Strategy{}, err
	}
	fail := func(err error, at ...any) error {
		field := "strategy"
		for _, x := range at[1:] {
			field += "." + fmt.Sprint(x)
		}
		return &yamlfile.Error{File: path, Line: yamlfile.Line(root, at...), Field: field, Err: err}
	}
	s := f.Strategy.Strategy()
	if s.Name == "" {
		return Strategy{}, fail(errors.New("missing"), "strategy", "name")
	}
	if s.RecordsInFlight < 1 {
		return Strategy{}, fail(fmt.Errorf("%d must be ≥ 1", s.RecordsInFlight), "strategy", "records_in_flight")
	}
	for _, m := range []struct {
		field string
		deps  []string
	}{{"permits", slices.Sorted(maps.Keys(s.Permits))}, {"rates", slices.Sorted(maps.Keys(s.Rates))}, {"adaptive", slices.Sorted(maps.Keys(s.Adaptive))}} {
		for _, dep := range m.deps {
			if p.Dependency(dep) == nil {
				return Strategy{}, fail(fmt.Errorf("%q is not a dependency of pipeline %s (%s)", dep, p.Name, p.File), "strategy", m.field, dep)
			}
			if n, ok := s.Permits[dep]; ok && m.field == "permits" && n < 1 {
				return Strategy{}, fail(fmt.Errorf("%d must be ≥ 1", n), "strategy", m.field, dep)
			}
			if r, ok := s.Rates[dep]; ok && m.field == "rates" && (!(r > 0) || math.IsInf(r, 0)) {
				return Strategy{}, fail(fmt.Errorf("%v must be > 0 (calls per lab second)", r), "strategy", m.field, dep)
			}
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(s.Adaptive)) {
		if err := s.Adaptive[dep].Validate(); err != nil {
			return Strategy{}, fail(err, "strategy", "adaptive", dep)
		}
	}
	if err := s.Retries.Validate(); err != nil {
		at := []any{"strategy"}
		if fe, ok := field.Of(err); ok {
			for _, part := range strings.Split(fe.Field, ".") {
				at = append(at, part)
			}
			err = fe.Err
		}
		return Strategy{}, fail(err, at...)
	}
	if err := s.Validate(); err != nil {
		return Strategy{}, fail(err, "strategy")
	}
	return s, nil
}
