package records

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadlab/loadlab/budgets"
)

// seconds is the unit of times at a time scale: "s" at 1 (one's own
// services), "lab s" otherwise.
func seconds(scale float64) string {
	if scale == 1 {
		return "s"
	}
	return "lab s"
}

// writeHeadline says how many records were accepted of how many (complete,
// or incomplete: an optional step failed), in how long, and at what rate.
func writeHeadline(w io.Writer, r Result) {
	accepted := r.Complete + r.Incomplete
	share := ""
	if r.Records > 0 {
		share = fmt.Sprintf(" (%.0f%%: %d complete, %d incomplete)", 100*float64(accepted)/float64(r.Records), r.Complete, r.Incomplete)
	}
	if r.TimeScale == 1 {
		fmt.Fprintf(w, "Accepted %d of %d records%s in %.2f s: %.2f records per second\n",
			accepted, r.Records, share, r.DurationSeconds, r.AcceptedPerRealSecond)
		return
	}
	fmt.Fprintf(w, "Accepted %d of %d records%s in %.2f real s = %.2f lab s (time scale %g): %.2f records per lab second (%.2f per real second)\n",
		accepted, r.Records, share, r.DurationSeconds, r.DurationSeconds/r.TimeScale, r.TimeScale, r.AcceptedPerLabSecond, r.AcceptedPerRealSecond)
}

// WriteResult writes a run's result for people.
func WriteResult(w io.Writer, r Result) error {
	peakWrites := "unknown (the target is not a loadlab mock service: client-side figures only)"
	switch {
	case r.PeakConcurrentWrite != nil:
		peakWrites = fmt.Sprint(*r.PeakConcurrentWrite)
	case r.ServerIdentified:
		peakWrites = "unknown (the write's dependency is not the mock service's system of record station, \"records\")"
	}
	fmt.Fprintf(w, "Strategy %s: %s\n", r.Strategy, r.Params.Describe())
	switch {
	case r.Partial && r.DurationLimit > 0:
		fmt.Fprintln(w, "PARTIAL: the run was interrupted before its end; records not begun are not counted.")
	case r.Partial:
		fmt.Fprintln(w, "PARTIAL: the run was interrupted; records not begun are not_started.")
	}
	fmt.Fprintf(w, "Records %d: complete %d, incomplete %d, write_rejected %d, failed %d, write_unknown %d, interrupted %d, not_started %d\n",
		r.Records, r.Complete, r.Incomplete, r.WriteRejected, r.Failed, r.WriteUnknown, r.Interrupted, r.NotStarted)
	if r.StepRejected > 0 {
		fmt.Fprintf(w, "Records refused at a required step before the write (step_rejected): %d\n", r.StepRejected)
	}
	if r.WriteUnknown > 0 {
		fmt.Fprintf(w, "Writes of unknown outcome (sent, never answered; --json lists their record ids): %d\n", r.WriteUnknown)
	}
	writeHeadline(w, r)
	if r.DurationLimit > 0 {
		fmt.Fprintf(w, "Time-bounded: records began for %g %s, then those in progress finished; clock started %s",
			r.DurationLimit, seconds(r.TimeScale), r.StartedAt.Format(time.RFC3339Nano))
		if r.StartLateSeconds > 0 {
			fmt.Fprintf(w, " (%.3f real s after --start-at)", r.StartLateSeconds)
		}
		if r.RecordsCapReached {
			fmt.Fprintf(w, "; ENDED EARLY: all %d records of --records began before the duration ended", r.Records)
		}
		fmt.Fprintln(w)
	}
	if len(r.Phases) > 0 {
		writePhases(w, r.Phases)
	}
	fmt.Fprintf(w, "Writes (the last step's calls): %d rejected; server peak concurrent writes %s\n", r.WriteRejections, peakWrites)
	if line := describeRetries(r.Attempts); line != "" {
		fmt.Fprintf(w, "Retries: %s\n", line)
	}
	if len(r.AdaptiveLimits) > 0 {
		var each []string
		for _, dep := range slices.Sorted(maps.Keys(r.AdaptiveLimits)) {
			each = append(each, fmt.Sprintf("%s %d", dep, r.AdaptiveLimits[dep]))
		}
		fmt.Fprintf(w, "Adaptive limits at the end: %s\n", strings.Join(each, ", "))
	}
	deps := slices.Sorted(maps.Keys(r.Calls))
	var peaks []string
	for _, dep := range deps {
		peaks = append(peaks, fmt.Sprintf("%s %d", dep, r.PeakInFlight[dep]))
	}
	fmt.Fprintf(w, "Client peak calls in flight: %s; records in flight %d (peak %d)\n",
		strings.Join(peaks, ", "), r.RecordsInFlight, r.PeakRecordsInFlight)
	for _, dep := range deps {
		var parts []string
		for _, c := range budgets.Classes {
			parts = append(parts, fmt.Sprintf("%s %d", c, r.Calls[dep][c]))
		}
		fmt.Fprintf(w, "Calls to %s: %s\n", dep, strings.Join(parts, ", "))
	}
	if len(r.ErrorKinds) > 0 {
		fmt.Fprintf(w, "Calls that ended in an error, by kind: %s\n", r.errorKindsText())
	}
	_, err := fmt.Fprintf(w, "Runtime: GOMAXPROCS %d, NumCPU %d, CPU quota %s\n", r.GOMAXPROCS, r.NumCPU, r.Quota())
	return err
}

// errorKindsText lists the error kinds, most first.
func (r Result) errorKindsText() string {
	kinds := slices.Collect(maps.Keys(r.ErrorKinds))
	slices.SortFunc(kinds, func(a, b ErrorKey) int {
		if d := r.ErrorKinds[b] - r.ErrorKinds[a]; d != 0 {
			return d
		}
		return strings.Compare(a.String(), b.String())
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s ×%d", k, r.ErrorKinds[k])
	}
	return strings.Join(parts, ", ")
}

// Trouble says what went wrong in the run — records failed, writes of
// unknown outcome, calls failed with transport errors or unexpected
// statuses — or "" when every record ended cleanly. loadlab run exits 1
// when it is not empty, and the experiment runner excludes the run.
func (r Result) Trouble() string {
	if r.Failed+r.WriteUnknown == 0 && r.Errors == 0 {
		return ""
	}
	t := fmt.Sprintf("%d records failed, %d writes of unknown outcome; %d calls failed with transport errors or unexpected statuses",
		r.Failed, r.WriteUnknown, r.Errors)
	if r.CallTimeouts+r.PermitTimeouts+r.RateTimeouts > 0 {
		t += fmt.Sprintf(", %d call timeouts, %d permit timeouts, %d rate timeouts", r.CallTimeouts, r.PermitTimeouts, r.RateTimeouts)
	}
	if len(r.ErrorKinds) > 0 {
		t += " (" + r.errorKindsText() + ")"
	}
	return t
}

// writePhases writes a phased run's figures as a table, one phase a row.
func writePhases(w io.Writer, phases []PhaseResult) {
	fmt.Fprintln(w, "Phases (lab seconds from the clock's start; each event counted in the phase it happened in; latency: a record's,")
	fmt.Fprintln(w, "from its beginning to its terminal state, of the records that ended in the phase; peak writes: in flight at the client):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  phase\tlab s\taccepted\taccepted per lab s\t503s (write rejections)\tpeak concurrent writes\tp50 lab ms\tp95 lab ms\tp99 lab ms")
	for _, p := range phases {
		fmt.Fprintf(tw, "  %s\t%.2f–%.2f\t%d\t%.2f\t%d\t%d\t%.1f\t%.1f\t%.1f\n", p.Name, p.Start, p.End, p.Accepted,
			p.AcceptedPerLabSecond, p.WriteRejections, p.PeakConcurrentWrites, p.LatencyMs.P50, p.LatencyMs.P95, p.LatencyMs.P99)
	}
	_ = tw.Flush()
}
