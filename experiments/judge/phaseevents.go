package judge

import (
	"fmt"
	"time"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// maxStartLate is how late (lab time) a phased run's child may start its
// clock after the agreed start before the run is invalid: its phases
// would no longer line up with the runner's changes.
const maxStartLate = 500 * time.Millisecond

// maxChangeLate is how late (lab time) a phase change may take effect
// after its scheduled time before the run is invalid: its figures would
// fall in the wrong phase.
const maxChangeLate = time.Second

// lateChange names a phase change that took effect more than maxChangeLate
// after its scheduled time (a restart: from when its signal was sent).
func lateChange(r resultsfile.RunRecord) string {
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
func lateStart(r resultsfile.RunRecord, scale float64) string {
	if len(r.Client.Phases) == 0 {
		return ""
	}
	if late := r.Client.StartLateSeconds / scale; late > maxStartLate.Seconds() {
		return fmt.Sprintf("the client started its clock %.2f lab s after the agreed start (at most %v): its phases do not line up with the runner's changes", late, maxStartLate)
	}
	return ""
}
