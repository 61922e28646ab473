// Package phases owns phased scenarios as data: a scenario whose
// conditions change during a run, from a profile through phases, each of
// which may change the mock service's live settings (a PATCH
// /admin/config body), put network faults between the client and a
// dependency, or restart the mock service's process (typed Signal); the
// phases' timing in lab time and their faults in real time; and the
// built-in scenarios (write-capacity-drop, enrichment-brownout). What an
// experiment file makes of them — which of its scenarios are phased, and
// their validation naming file, line and field — is experiments/design's.
package phases

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// PhasedScenario is a scenario whose conditions change during the run: it
// starts from a profile and goes through phases, each of which may change
// the mock service's live settings, the network faults between the client
// and each dependency, and restart the mock service's process.
type PhasedScenario struct {
	// Profile is the mock service's profile at the start (default healthy).
	Profile string  `yaml:"profile" json:"profile"`
	Phases  []Phase `yaml:"phases" json:"phases"`
}

// Phase is one stretch of a phased run.
type Phase struct {
	Name string `yaml:"name" json:"name"`
	// Duration is in lab time; a scenario's phases add up to the
	// experiment's duration.
	Duration time.Duration `yaml:"duration" json:"duration"`
	// Set changes the mock service's live settings at the phase's start,
	// on top of the settings in force: PATCH /admin/config's body (any of
	// enrichment and records, each with workers, queue, reject_status and
	// service, a service-time distribution merged field by field).
	Set map[string]any `yaml:"set,omitempty" json:"set,omitempty"`
	// Faults are the network faults in force during the phase, through an
	// in-process proxy per dependency (durations in lab time); a phase
	// without faults has none.
	Faults []faults.Fault `yaml:"faults,omitempty" json:"faults,omitempty"`
	// Restart, when set, restarts the mock service's process during the
	// phase.
	Restart *Restart `yaml:"restart,omitempty" json:"restart,omitempty"`
}

// Restart stops the mock service's process After the phase's start (lab
// time) with Signal (TERM: a graceful shutdown; KILL: a crash) and starts
// it again on the same address, with the same store.
type Restart struct {
	After  time.Duration `yaml:"after" json:"after"`
	Signal Signal        `yaml:"signal" json:"signal"`
}

// Signal is how a restart stops the mock service's process.
type Signal string

// Restart signals.
const (
	// SignalTerm is a graceful shutdown (SIGTERM).
	SignalTerm Signal = "TERM"
	// SignalKill is a crash (SIGKILL).
	SignalKill Signal = "KILL"
)

// Built-in phased scenarios.
const (
	WriteCapacityDrop  = "write-capacity-drop"
	EnrichmentBrownout = "enrichment-brownout"
)

// Phases of the built-in scenarios, in lab time: the change lasts
// builtinChange, with builtinCalm before and after it.
const (
	builtinCalm   = 10 * time.Second
	builtinChange = 20 * time.Second
)

// DropWorkers and DropQueue are the system of record's workers and queue
// slots during write-capacity-drop's drop.
const DropWorkers, DropQueue = 2, 2

// BuiltinPhased returns the built-in phased scenarios: write-capacity-drop
// (healthy writes; then the system of record falls to 2 workers and 2 queue
// slots for 20 lab seconds; then it recovers) and enrichment-brownout
// (healthy enrichment; then the slow-enrichment profile's distribution,
// median 1.2 s with hangs, for 20 lab seconds; then healthy again). Their
// phases add up to 40 lab seconds.
func BuiltinPhased() map[string]PhasedScenario {
	def := config.Default()
	records := func(workers, queue int) map[string]any {
		return map[string]any{api.Records: map[string]any{"workers": workers, "queue": queue}}
	}
	enrichment := func(s latency.Spec) map[string]any {
		return map[string]any{api.Enrichment: map[string]any{"service": ServiceBody(s)}}
	}
	return map[string]PhasedScenario{
		WriteCapacityDrop: {Profile: config.ProfileHealthy, Phases: []Phase{
			{Name: "before", Duration: builtinCalm},
			{Name: "drop", Duration: builtinChange, Set: records(DropWorkers, DropQueue)},
			{Name: "after", Duration: builtinCalm, Set: records(def.Records.Workers, def.Records.Queue)},
		}},
		EnrichmentBrownout: {Profile: config.ProfileHealthy, Phases: []Phase{
			{Name: "before", Duration: builtinCalm},
			{Name: "brownout", Duration: builtinChange, Set: enrichment(def.Profiles[config.ProfileSlowEnrichment].Enrichment)},
			{Name: "after", Duration: builtinCalm, Set: enrichment(def.Profiles[config.ProfileHealthy].Enrichment)},
		}},
	}
}

// ServiceBody is a distribution as a PATCH body's service: the whole spec, its
// durations as text, so that it replaces every field in force.
func ServiceBody(s latency.Spec) map[string]any {
	b, _ := yaml.Marshal(s)
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	// Zero fields are omitted by the spec's tags: name them, so that a
	// field of the distribution in force (a hang, say) does not survive.
	// (The built-ins' distributions have no components or resolution; their
	// definitions are part of the locked design, so they stay as locked.)
	for _, k := range []string{"hang_duration", "value", "min", "max", "median"} {
		if _, ok := m[k]; !ok {
			m[k] = "0s"
		}
	}
	for _, k := range []string{"hang_probability", "spread"} {
		if _, ok := m[k]; !ok {
			m[k] = 0
		}
	}
	return m
}

// RunPhases is the phases as a run divides its time: each name and
// duration.
func (p PhasedScenario) RunPhases() []records.Phase {
	var out []records.Phase
	for _, ph := range p.Phases {
		out = append(out, records.Phase{Name: ph.Name, Duration: ph.Duration})
	}
	return out
}

// HasRestart says whether any phase restarts the mock service.
func (p PhasedScenario) HasRestart() bool {
	return slices.ContainsFunc(p.Phases, func(ph Phase) bool { return ph.Restart != nil })
}

// HasFaults says whether any phase has network faults.
func (p PhasedScenario) HasFaults() bool {
	return slices.ContainsFunc(p.Phases, func(ph Phase) bool { return len(ph.Faults) > 0 })
}

// Start is the lab time from the run's start at which phase i begins.
func (p PhasedScenario) Start(i int) time.Duration {
	var t time.Duration
	for _, ph := range p.Phases[:i] {
		t += ph.Duration
	}
	return t
}

// Total is the phases' summed duration.
func (p PhasedScenario) Total() time.Duration { return p.Start(len(p.Phases)) }

// PatchBody is a phase's Set as PATCH /admin/config's JSON body.
func (ph Phase) PatchBody() ([]byte, error) { return json.Marshal(ph.Set) }

// ScaledFaults is the phase's faults in real time: durations times the
// time scale, a bandwidth divided by it (rounded up: never 0).
func (ph Phase) ScaledFaults(scale float64) []faults.Fault {
	out := slices.Clone(ph.Faults)
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	for i := range out {
		out[i].Latency, out[i].Jitter, out[i].After = sc(out[i].Latency), sc(out[i].Jitter), sc(out[i].After)
		if out[i].RateKBps > 0 {
			out[i].RateKBps = int64(math.Ceil(float64(out[i].RateKBps) / scale))
		}
	}
	return out
}
