package design

import (
	"errors"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
)

// validatePhased checks a phased scenario: its profile, its phases' names
// and durations (adding up to the experiment's duration), each Set applied
// in turn as the mock service would (config.ApplyPatch: the field named),
// each fault, each restart. Its fields are named "phased.NAME…" wherever
// lines is in the document (the scenario's definition, or its name in
// scenarios for a built-in one).
func (s Spec) validatePhased(name string, p phases.PhasedScenario, lines []any) *problem {
	l := loc{field: "phased." + name, line: lines, dotted: true}
	base := config.Default()
	if _, ok := base.Profiles[p.Profile]; !ok {
		return failf(l.in("profile"), "unknown profile %q (one of %s)", p.Profile, strings.Join(base.ProfileNames(), ", "))
	}
	if len(p.Phases) == 0 {
		return fail(l.in("phases"), errors.New("at least one phase is needed"))
	}
	live := base.LiveOf(p.Profile)
	seen := map[string]bool{}
	for i, ph := range p.Phases {
		pl := l.in("phases", i)
		if pr := validatePhaseName(ph, pl, seen); pr != nil {
			return pr
		}
		seen[ph.Name] = true
		var pr *problem
		if live, pr = validatePhaseSet(ph, pl, live); pr != nil {
			return pr
		}
		if pr := validatePhaseFaults(ph, pl); pr != nil {
			return pr
		}
		if pr := validatePhaseRestart(ph, pl); pr != nil {
			return pr
		}
	}
	if total := p.Total(); total != s.Duration {
		if s.Duration == 0 {
			return failf(l.in("phases"), "the phases add up to %v: give the experiment a duration of %v (a phased scenario's runs are time-bounded)", total, total)
		}
		return failf(l.in("phases"), "the phases add up to %v, not the experiment's duration of %v", total, s.Duration)
	}
	return nil
}

// validatePhaseName checks a phase's name (unique, usable in loadlab
// run's --phases, not the drain's) and duration.
func validatePhaseName(ph phases.Phase, l loc, seen map[string]bool) *problem {
	switch {
	case ph.Name == "" || strings.ContainsAny(ph.Name, "=, ") || ph.Name == records.DrainPhase:
		return failf(l.in("name"), "%q: give a name without '=', ',' or spaces, other than %q", ph.Name, records.DrainPhase)
	case seen[ph.Name]:
		return failf(l.in("name"), "%q is used twice", ph.Name)
	case ph.Duration <= 0:
		return failf(l.in("duration"), "%v must be > 0", ph.Duration)
	}
	return nil
}

// validatePhaseSet applies the phase's settings to live as the mock
// service would, and returns the settings then in force.
func validatePhaseSet(ph phases.Phase, l loc, live map[string]config.Live) (map[string]config.Live, *problem) {
	if len(ph.Set) == 0 {
		return live, nil
	}
	body, err := ph.PatchBody()
	if err == nil {
		live, _, err = config.ApplyPatch(body, live)
	}
	if err != nil {
		return live, fail(l.in("set"), err)
	}
	return live, nil
}

// validatePhaseFaults checks each fault, that it names a dependency of
// the lab's pipeline, and that it lets the runs reconcile.
func validatePhaseFaults(ph phases.Phase, l loc) *problem {
	deps := pipeline.Lab().Names()
	for j, ft := range ph.Faults {
		fl := l.in("faults", j)
		if err := ft.Validate(); err != nil {
			return fail(fl, err)
		}
		if ft.Direction == faults.Upstream && (ft.Kind == faults.Reset || ft.Kind == faults.Blackhole) {
			return failf(fl.in("direction"), "a %s upstream drops requests the client has sent in full, so no run could reconcile its calls with the server's: use downstream", ft.Kind)
		}
		if !slices.Contains(deps, ft.Dependency) {
			return failf(fl.in("dependency"), "%q is not a dependency of the lab's pipeline (%s)", ft.Dependency, strings.Join(deps, ", "))
		}
	}
	return nil
}

// validatePhaseRestart checks the phase's restart: its signal, and a
// time within the phase.
func validatePhaseRestart(ph phases.Phase, l loc) *problem {
	r := ph.Restart
	if r == nil {
		return nil
	}
	switch {
	case r.Signal != phases.SignalTerm && r.Signal != phases.SignalKill:
		return failf(l.in("restart", "signal"), "%q is not %s (a graceful shutdown) or %s (a crash)", r.Signal, phases.SignalTerm, phases.SignalKill)
	case r.After < 0 || r.After >= ph.Duration:
		return failf(l.in("restart", "after"), "%v must be in [0, the phase's %v)", r.After, ph.Duration)
	}
	return nil
}
