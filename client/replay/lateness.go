package replay

import (
	"slices"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// lateness is, for each request (issue order), how far behind the model's
// timeline the server finished it, in real time: the model admits a
// request at its issue, starts it at once or when a worker frees, and
// serves it for exactly its duration; the real server admits it later
// (the network, its turn in issue order), serves it for longer (a timer's
// lateness, a stall), and a request it started when a worker freed
// inherits the lateness of the one that finished then. Its finish without
// that lateness is where the model would put it, so a deadline between the
// two is decided by timing noise, not by the workload.
//
// entries are the requests' log entries in issue order (each started and
// finished), durs their service durations in real time.
func lateness(issue []time.Time, entries []api.RequestEntry, durs []time.Duration) []time.Duration {
	n := len(entries)
	late := make([]time.Duration, n)
	byStart := make([]int, n)
	byFinish := make([]int, n)
	for i := range n {
		byStart[i], byFinish[i] = i, i
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return entries[a].Started.Compare(*entries[b].Started) })
	slices.SortStableFunc(byFinish, func(a, b int) int { return entries[a].Finished.Compare(*entries[b].Finished) })
	freed := make([]bool, n) // a finish that has dispatched a waiting request
	for _, i := range byStart {
		e := entries[i]
		overrun := max(e.Finished.Sub(*e.Started)-durs[i], 0)
		// The finish that freed the worker this request waited for: the
		// latest not yet used at or before its start, and after its arrival
		// (else it did not wait: it started on arrival).
		pred := -1
		for k := len(byFinish) - 1; k >= 0; k-- {
			j := byFinish[k]
			if !entries[j].Finished.After(*e.Started) && !freed[j] {
				pred = j
				break
			}
		}
		if pred >= 0 && !entries[pred].Finished.Before(e.Arrived) {
			freed[pred] = true
			late[i] = late[pred] + max(e.Started.Sub(*entries[pred].Finished), 0) + overrun
		} else {
			late[i] = max(e.Started.Sub(issue[i]), 0) + overrun
		}
	}
	return late
}
