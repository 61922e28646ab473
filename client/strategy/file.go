package strategy

import (
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
	s, err := f.Strategy.Check(p)
	if err != nil {
		at, fieldName := []any{"strategy"}, "strategy"
		if fe, ok := field.Of(err); ok {
			if fe.Field != "" {
				for _, part := range strings.Split(fe.Field, ".") {
					at = append(at, part)
				}
				fieldName += "." + fe.Field
			}
			err = fe.Err
		}
		return Strategy{}, &yamlfile.Error{File: path, Line: yamlfile.Line(root, at...), Field: fieldName, Err: err}
	}
	return s, nil
}

// Check checks a strategy as a file (or an experiment file's inline
// strategy) gives it against the pipeline it will run, and returns it as a
// run takes it; an error names the field below the strategy
// (field.Of: "permits.orders").
func (f FileStrategy) Check(p *pipeline.Pipeline) (Strategy, error) {
	s := f.Strategy()
	if s.Name == "" {
		return Strategy{}, field.Errorf("name", "missing")
	}
	if s.RecordsInFlight < 1 {
		return Strategy{}, field.Errorf("records_in_flight", "%d must be ≥ 1", s.RecordsInFlight)
	}
	for _, m := range []struct {
		field string
		deps  []string
	}{{"permits", slices.Sorted(maps.Keys(s.Permits))}, {"rates", slices.Sorted(maps.Keys(s.Rates))}, {"adaptive", slices.Sorted(maps.Keys(s.Adaptive))}} {
		for _, dep := range m.deps {
			at := m.field + "." + dep
			if p.Dependency(dep) == nil {
				return Strategy{}, field.Errorf(at, "%q is not a dependency of pipeline %s (%s)", dep, p.Name, p.File)
			}
			if n, ok := s.Permits[dep]; ok && m.field == "permits" && n < 1 {
				return Strategy{}, field.Errorf(at, "%d must be ≥ 1", n)
			}
			if r, ok := s.Rates[dep]; ok && m.field == "rates" && (!(r > 0) || math.IsInf(r, 0)) {
				return Strategy{}, field.Errorf(at, "%v must be > 0 (calls per lab second)", r)
			}
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(s.Adaptive)) {
		if err := s.Adaptive[dep].Validate(); err != nil {
			return Strategy{}, field.Errorf("adaptive."+dep, "%w", err)
		}
	}
	if err := s.Retries.Validate(); err != nil {
		return Strategy{}, err // its field below the strategy, when it has one
	}
	if err := s.Validate(); err != nil {
		return Strategy{}, &field.Error{Err: err} // the strategy's as a whole
	}
	return s, nil
}
