package design

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/client/virtualcopy"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

// AsProbed is the scenario of an experiment on one's own services that
// changes nothing: every virtual copy as its probe measured the original.
const AsProbed = "as-probed"

// VirtualSpec is one dependency of an experiment's own pipeline that runs
// against a virtual copy fitted from its probe (loadlab probe --json's
// file, relative to the experiment file).
type VirtualSpec struct {
	Probe string `yaml:"probe" json:"probe"`
}

// PipelineOf is the pipeline the experiment's records run: its own, or
// the lab's.
func (s Spec) PipelineOf() *pipeline.Pipeline {
	if s.Own != nil {
		return s.Own.Pipeline
	}
	return pipeline.Lab()
}

// OwnMetrics are the metrics of an experiment on one's own services
// besides the lab's, by dependency: its peak calls in flight at the
// client and the calls its copy refused (none for the lab's).
func (s Spec) OwnMetrics() []string {
	var out []string
	if s.Own == nil {
		return nil
	}
	for _, d := range s.Own.Pipeline.Names() {
		out = append(out, "peak_in_flight_"+d)
		if _, ok := s.Own.Copies[d]; ok {
			out = append(out, d+"_refused")
		}
	}
	return out
}

// CopiesFor are the copies as scenario runs them (a phased one: as it
// starts), by dependency: each fitted copy with the scenario's changes.
func (s Spec) CopiesFor(scenario string) map[string]config.Virtual {
	if _, ok := s.PhasedScenarios[scenario]; ok {
		return s.PhaseCopies(scenario)[0]
	}
	out := map[string]config.Virtual{}
	for name, v := range s.Own.Copies {
		if ch, ok := s.Changes[scenario][name]; ok {
			v = ch.Apply(v)
		}
		out[name] = v
	}
	return out
}

// ScenarioList is the experiment file's scenarios: each a name (a
// profile, a phased scenario, as-probed), or for one's own services a
// mapping of a name and, by dependency, what it changes in the copy
// (loadSpec reads those into Spec.Changes).
type ScenarioList []string

// UnmarshalYAML takes each entry's name.
func (l *ScenarioList) UnmarshalYAML(n *yaml.Node) error {
	names, err := entryNames(n, "scenarios", "a scenario of changes needs a name", "give a name, or a name and the copies' changes")
	*l = names
	return err
}

// entryNames are the names of list's entries, each a name or a mapping
// with one (named needs otherwise; give for an entry of another kind).
func entryNames(n *yaml.Node, list, needs, give string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: %s: give a list", n.Line, list)
	}
	var out []string
	for i, e := range n.Content {
		switch e.Kind {
		case yaml.ScalarNode:
			out = append(out, e.Value)
		case yaml.MappingNode:
			name, _ := mapValue(e, "name")
			if name == nil || name.Kind != yaml.ScalarNode || name.Value == "" {
				return nil, fmt.Errorf("line %d: %s[%d]: %s", e.Line, list, i, needs)
			}
			out = append(out, name.Value)
		default:
			return nil, fmt.Errorf("line %d: %s[%d]: %s", e.Line, list, i, give)
		}
	}
	return out, nil
}

// mapValue is the value of key in mapping n, and its key's node.
func mapValue(n *yaml.Node, key string) (value, keyNode *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1], n.Content[i]
		}
	}
	return nil, nil
}

// readChanges reads, from the experiment file's document, each mapping
// scenario's changes by dependency into s.Changes.
func (s *Spec) readChanges(root *yaml.Node) *problem {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	list, _ := mapValue(doc, "scenarios")
	if list == nil {
		return nil
	}
	for i, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		name, _ := mapValue(e, "name")
		changes := map[string]own.CopyChange{}
		for j := 0; j+1 < len(e.Content); j += 2 {
			dep, v := e.Content[j].Value, e.Content[j+1]
			if dep == "name" {
				continue
			}
			ch, err := own.DecodeChange(v)
			if err != nil {
				return fail(at("scenarios", i, dep), err)
			}
			changes[dep] = ch
		}
		if s.Changes == nil {
			s.Changes = map[string]map[string]own.CopyChange{}
		}
		s.Changes[name.Value] = changes
	}
	return nil
}

func didYouMean(k string, names []string) string {
	if c := field.Closest(k, names); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// loadOwn reads the pipeline, fits each virtual copy from its probe and
// loads the strategy files, each path relative to the experiment file
// (path).
func (s *Spec) loadOwn(path string) *problem {
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	p, err := pipeline.Load(rel(s.Pipeline))
	if err != nil {
		return fail(at("pipeline"), err)
	}
	// As the experiment file names it, wherever it was read from: the
	// results of one experiment hold one pipeline, whether it was begun
	// from the file's folder and resumed from another or not.
	p.File = s.Pipeline
	o := &own.Own{Pipeline: p, Copies: map[string]config.Virtual{}, Fit: map[string][]string{}}
	for _, name := range slices.Sorted(maps.Keys(s.Virtual)) {
		if p.Dependency(name) == nil {
			return failf(at("virtual", name), "pipeline %s has no dependency %s (it has %s)%s", p.Name, name, strings.Join(p.Names(), ", "), didYouMean(name, p.Names()))
		}
		r, err := probe.ReadFile(rel(s.Virtual[name].Probe))
		if err != nil {
			return fail(at("virtual", name, "probe"), err)
		}
		c, err := virtualcopy.Fit(name, r, virtualcopy.Options{})
		if err != nil {
			return fail(at("virtual", name, "probe"), err)
		}
		c.AnswerAs(p.Dependency(name))
		paths, err := c.PathsFor(p.Dependency(name))
		if err != nil {
			return fail(at("virtual", name, "probe"), err)
		}
		o.Copies[name] = c.Virtual("127.0.0.1:0", paths...)
		o.Fit[name] = c.Said
	}
	for _, name := range slices.Sorted(maps.Keys(s.StrategyFiles)) {
		st, err := strategy.LoadFile(rel(s.StrategyFiles[name]), p)
		if err != nil {
			return fail(at("strategy_files", name), err)
		}
		if o.Strategies == nil {
			o.Strategies = map[string]strategy.Strategy{}
		}
		st.Name = name
		o.Strategies[name] = st
	}
	s.Own = o
	return s.loadInline()
}

// validateOwn checks an experiment on one's own services: a pipeline
// loaded, a virtual copy for every dependency (a run against a real
// service could not be reconciled or repeated), scenarios that are
// as-probed, change copies that exist or are phased scenarios of copies.
func (s Spec) validateOwn() *problem {
	if s.Pipeline == "" {
		switch {
		case len(s.Virtual) > 0:
			return fail(at("virtual"), errors.New("virtual copies are of a pipeline's dependencies: give pipeline: FILE"))
		case len(s.StrategyFiles) > 0:
			return fail(at("strategy_files"), errors.New("strategy files are run on one's own pipeline: give pipeline: FILE"))
		case len(s.inline) > 0:
			first := slices.MinFunc(slices.Collect(maps.Values(s.inline)), func(a, b inlineStrategy) int { return a.index - b.index })
			return fail(at("strategies", first.index), errors.New("a strategy given inline runs on one's own pipeline: give pipeline: FILE (the lab's strategies are C1–C6, advised, or advise.file)"))
		}
		return nil
	}
	if s.Own == nil {
		return fail(at("pipeline"), errors.New("not loaded"))
	}
	if len(s.Virtual) == 0 {
		return fail(at("virtual"), errors.New("give a virtual copy of at least one dependency (NAME: {probe: FILE}): an experiment on one's own services runs against copies"))
	}
	if real := s.Own.Real(); len(real) > 0 && s.TimeScale != 1 {
		return failf(at("time_scale"), "%v: %s has no virtual copy, so its calls go to its base_url, a real service, which runs in real time: give time_scale: 1, or a copy of it (%s: {probe: FILE})",
			s.TimeScale, strings.Join(real, ", "), real[0])
	}
	for _, name := range slices.Sorted(maps.Keys(s.PhasedScenarios)) {
		if p := s.validateOwnPhased(name, s.PhasedScenarios[name]); p != nil {
			return p
		}
	}
	if s.Advise != nil && s.Advise.File != "" {
		return fail(at("advise", "file"), errors.New("on one's own services, name a strategy file in strategy_files and run it by that name"))
	}
	for i, sc := range s.Scenarios {
		ch, changes := s.Changes[sc]
		_, phased := s.PhasedScenarios[sc]
		if !changes && !phased && sc != AsProbed {
			return failf(at("scenarios", i), "%q: a scenario of one's own services is %s, a mapping of a name and the copies' changes (- name: slow-%s, %s: {service_time: 3}), or one of the file's phased scenarios%s", sc, AsProbed, s.Own.Write(), s.Own.Write(), s.ownPhasedNames())
		}
		for _, dep := range slices.Sorted(maps.Keys(ch)) {
			if p := s.validateChange(at("scenarios", i, dep), dep, ch[dep]); p != nil {
				return p
			}
		}
	}
	return nil
}

// validateChange checks one copy's change in a scenario.
func (s Spec) validateChange(l loc, dep string, ch own.CopyChange) *problem {
	v, ok := s.Own.Copies[dep]
	if !ok {
		names := slices.Sorted(maps.Keys(s.Own.Copies))
		return failf(l, "no virtual copy %s (there are %s)%s", dep, strings.Join(names, ", "), didYouMean(dep, names))
	}
	for _, f := range []struct {
		key   string
		v     *float64
		least float64
	}{{"service_time", ch.ServiceTime, 0}, {"workers", ch.Workers, 0}, {"queue", ch.Queue, -1}, {"rate", ch.Rate, 0}} {
		if f.v != nil && (!(*f.v > f.least) || math.IsInf(*f.v, 0)) {
			if f.least < 0 {
				return failf(l.in(f.key), "%v must be ≥ 0 (a multiple of the copy's)", *f.v)
			}
			return failf(l.in(f.key), "%v must be > 0 (a multiple of the copy's)", *f.v)
		}
	}
	switch {
	case ch.Rate != nil && v.Rate == nil:
		return failf(l.in("rate"), "the copy of %s has no rate limit: its probe saw no token bucket", dep)
	case ch.Queue != nil && v.Station.Queue == config.UnboundedQueue:
		return failf(l.in("queue"), "the copy of %s has an unbounded queue: its probe saw no refusals", dep)
	}
	return nil
}
