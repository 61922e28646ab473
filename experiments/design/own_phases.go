package design

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
)

// An experiment on one's own services may have phased scenarios of its
// own: each starts with every copy as probed, and each phase's set
// changes copies as a scenario does (by dependency, each a multiple of
// the copy as fitted: orders: {workers: 0.5}; orders: {} gives the copy
// as fitted back), the copies it does not name keeping what is in force;
// its faults go through a proxy in front of each copy. A copy has no
// process to restart and no store to replay.

// PhaseCopies are the copies as each phase of the phased scenario called
// name shapes them, by phase and then by dependency: the copies as
// fitted, then each phase's changes on top of what is in force. A
// scenario that is not phased has one phase, its changes' (CopiesFor).
func (s Spec) PhaseCopies(name string) []map[string]config.Virtual {
	p, ok := s.PhasedScenarios[name]
	if !ok {
		return []map[string]config.Virtual{s.CopiesFor(name)}
	}
	inForce := maps.Clone(s.Own.Copies)
	var out []map[string]config.Virtual
	for _, ph := range p.Phases {
		changes, _ := own.PhaseChanges(ph) // validated at load
		for dep, ch := range changes {
			inForce[dep] = ch.Apply(s.Own.Copies[dep])
		}
		out = append(out, maps.Clone(inForce))
	}
	return out
}

// validateOwnPhased checks a phased scenario of one's own services: it
// starts as probed, its phases' names and durations (adding up to the
// experiment's), each set's changes of copies that exist (each applied as
// the copy would take it live), its faults on dependencies with a copy,
// and no restart.
func (s Spec) validateOwnPhased(name string, p phases.PhasedScenario) *problem {
	l := loc{field: "phased." + name, line: []any{"phased", name}, dotted: true}
	if p.Profile != "" && p.Profile != AsProbed {
		return failf(l.in("profile"), "%q: a phased scenario of one's own services starts with every copy %s (leave profile out); its phases' set changes the copies", p.Profile, AsProbed)
	}
	if len(p.Phases) == 0 {
		return fail(l.in("phases"), errors.New("at least one phase is needed"))
	}
	seen := map[string]bool{}
	for i, ph := range p.Phases {
		pl := l.in("phases", i)
		if pr := validatePhaseName(ph, pl, seen); pr != nil {
			return pr
		}
		seen[ph.Name] = true
		if pr := s.validateCopySet(pl, ph); pr != nil {
			return pr
		}
		if pr := s.validateCopyFaults(pl, ph); pr != nil {
			return pr
		}
		if ph.Restart != nil {
			return fail(pl.in("restart"), errors.New("a virtual copy has no process of its own to restart, nor a store to replay: restarts are the lab's mock service's"))
		}
	}
	if total := p.Total(); total != s.Duration {
		return failf(l.in("phases"), "the phases add up to %v, not the experiment's duration of %v (give duration: %v)", total, s.Duration, total)
	}
	return nil
}

// validateCopySet checks a phase's changes of the copies, each applied to
// the copy as fitted as the copy itself would take it live.
func (s Spec) validateCopySet(l loc, ph phases.Phase) *problem {
	for _, dep := range slices.Sorted(maps.Keys(ph.Set)) {
		ch, err := own.ChangeOf(ph.Set[dep])
		if err != nil {
			return fail(l.in("set", dep), err)
		}
		if pr := s.validateChange(l.in("set", dep), dep, ch); pr != nil {
			return pr
		}
		v := s.Own.Copies[dep]
		body, err := yaml.Marshal(own.CopyPatch(dep, ch.Apply(v)))
		if err == nil {
			_, err = config.ApplyVirtualPatch(body, dep, v.Live())
		}
		if err != nil {
			return fail(l.in("set", dep), err)
		}
	}
	return nil
}

// validateCopyFaults checks a phase's faults: each on a dependency with a
// copy (the proxy stands in front of it), none that loses a call the
// client sent in full, and none that loses the write's answer, whose
// outcome a copy (no store) could not tell.
func (s Spec) validateCopyFaults(l loc, ph phases.Phase) *problem {
	names := slices.Sorted(maps.Keys(s.Own.Copies))
	for j, ft := range ph.Faults {
		fl := l.in("faults", j)
		lost := ft.Kind == faults.Reset || ft.Kind == faults.Blackhole
		switch err := ft.Validate(); {
		case err != nil:
			return fail(fl, err)
		case !slices.Contains(names, ft.Dependency):
			return failf(fl.in("dependency"), "%q has no virtual copy (faults go through a proxy in front of a copy: %s)%s", ft.Dependency, strings.Join(names, ", "), didYouMean(ft.Dependency, names))
		case lost && ft.Direction == faults.Upstream:
			return failf(fl.in("direction"), "a %s upstream drops requests the client has sent in full, so no run could reconcile its calls with the copy's: use downstream", ft.Kind)
		case lost && ft.Dependency == s.Own.Write():
			return failf(fl.in("kind"), "a %s of the write %s loses answers, and a copy keeps no store to tell whether such a write was made: every run would be invalid; give the write latency or bandwidth, or fault a lookup", ft.Kind, ft.Dependency)
		}
	}
	return nil
}

// ownPhasedNames lists the file's phased scenarios for a message: " (NAME,
// …)", or nothing.
func (s Spec) ownPhasedNames() string {
	if len(s.PhasedScenarios) == 0 {
		return ""
	}
	return " (" + strings.Join(slices.Sorted(maps.Keys(s.PhasedScenarios)), ", ") + ")"
}
