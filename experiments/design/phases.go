package design

import (
	"maps"
	"slices"

	"github.com/loadlab/loadlab/experiments/phases"
)

// Phased returns the phased scenario called name: the experiment file's
// own, else a built-in one.
func (s Spec) Phased(name string) (phases.PhasedScenario, bool) {
	if p, ok := s.PhasedScenarios[name]; ok {
		return p, true
	}
	p, ok := phases.BuiltinPhased()[name]
	return p, ok
}

// HasPhased says whether any scenario of the experiment is phased.
func (s Spec) HasPhased() bool {
	return slices.ContainsFunc(s.Scenarios, func(sc string) bool { _, ok := s.Phased(sc); return ok })
}

// HasRestarts says whether any scenario of the experiment restarts the mock
// service.
func (s Spec) HasRestarts() bool {
	return slices.ContainsFunc(s.Scenarios, s.restarts)
}

// Faulted says whether a scenario injects network faults or restarts the
// mock service: records failing is then what it measures.
func (s Spec) Faulted(scenario string) bool {
	p, ok := s.Phased(scenario)
	return ok && (p.HasFaults() || p.HasRestart())
}

// ProfileOf is the profile a scenario starts from.
func (s Spec) ProfileOf(scenario string) string {
	if p, ok := s.Phased(scenario); ok {
		return p.Profile
	}
	return scenario
}

// phasedNames lists the phased scenarios known to the experiment, for
// messages.
func (s Spec) phasedNames() []string {
	names := slices.Collect(maps.Keys(phases.BuiltinPhased()))
	for n := range s.PhasedScenarios {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
