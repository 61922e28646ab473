package judge

import (
	"fmt"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
)

// PhaseEvent is one change the runner made during a phased run, and when:
// times in lab seconds from the run's start (real seconds / time scale).
type PhaseEvent struct {
	Phase     string      `json:"phase"`
	Action    PhaseAction `json:"action"`
	Scheduled float64     `json:"scheduled"`
	At        float64     `json:"at"`
	// Done is when the action had taken effect (for a restart: when the
	// mock service answered again with the phase's settings).
	Done float64 `json:"done"`
	Err  string  `json:"error,omitempty"`
	// Note: for a restart, what the restarted mock service's store
	// replayed.
	Note string `json:"note,omitempty"`
}

// maxStartLate is how late (lab time) a phased run's child may start its
// clock after the agreed start before the run is invalid: its phases
// would no longer line up with the runner's changes.
const maxStartLate = 500 * time.Millisecond

// Restarts counts the restarts the runner made during the run.
func (r RunRecord) Restarts() int {
	n := 0
	for _, ev := range r.PhaseEvents {
		if ev.Action.IsRestart() {
			n++
		}
	}
	return n
}

// PhaseTrouble says which phase change failed, if one did: the run did not
// have the conditions it was to measure.
func (r RunRecord) PhaseTrouble() string {
	for _, ev := range r.PhaseEvents {
		if ev.Err != "" {
			return fmt.Sprintf("phase %s: %s at %.2f lab s: %s", ev.Phase, ev.Action, ev.At, ev.Err)
		}
	}
	return ""
}

// maxChangeLate is how late (lab time) a phase change may take effect
// after its scheduled time before the run is invalid: its figures would
// fall in the wrong phase.
const maxChangeLate = time.Second

// lateChange names a phase change that took effect more than maxChangeLate
// after its scheduled time (a restart: from when its signal was sent).
func (r RunRecord) lateChange() string {
	for _, ev := range r.PhaseEvents {
		at := ev.Done
		if ev.Action.IsRestart() {
			at = ev.At
		}
		if late := at - ev.Scheduled; late > maxChangeLate.Seconds() {
			return fmt.Sprintf("phase %s: %s took effect %.2f lab s after its scheduled %.2f (at most %v): the phases' figures would not be the phases'", ev.Phase, ev.Action, late, ev.Scheduled, maxChangeLate)
		}
	}
	return ""
}

// lateStart says whether a phased run's child started its clock so late
// after the agreed start that its phases no longer line up with the
// runner's changes.
func (r RunRecord) lateStart(scale float64) string {
	if len(r.Client.Phases) == 0 {
		return ""
	}
	if late := r.Client.StartLateSeconds / scale; late > maxStartLate.Seconds() {
		return fmt.Sprintf("the client started its clock %.2f lab s after the agreed start (at most %v): its phases do not line up with the runner's changes", late, maxStartLate)
	}
	return ""
}

// PhaseAction is a kind of change the runner makes during a phased run.
type PhaseAction string

// Phase actions.
const (
	// ActionSet: the mock service's live settings changed (PATCH
	// /admin/config).
	ActionSet PhaseAction = "set"
	// ActionFaults: the fault proxies' toxics replaced.
	ActionFaults PhaseAction = "faults"
	// ActionRestartTerm and ActionRestartKill: the mock service's process
	// restarted after a graceful shutdown or a crash.
	ActionRestartTerm PhaseAction = "restart TERM"
	ActionRestartKill PhaseAction = "restart KILL"
)

// RestartAction is the action of a restart with signal sig.
func RestartAction(sig design.Signal) PhaseAction {
	if sig == design.SignalKill {
		return ActionRestartKill
	}
	return ActionRestartTerm
}

// IsRestart says whether the action restarted the mock service.
func (a PhaseAction) IsRestart() bool { return a == ActionRestartTerm || a == ActionRestartKill }
