package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadlab/loadlab/experiments/models"
)

// WriteResult writes a load run's result for people: every outcome, what
// the generator could not do, latency percentiles, the server's figures,
// and a chart over time.
func WriteResult(w io.Writer, cfg Config, r Result) error {
	fmt.Fprintf(w, "Real run: %s generator, %s arrivals, time scale %g, against %s (%s client, at most %d requests in flight)\n",
		cfg.Scenario.Generator, cfg.Arrivals, cfg.TimeScale, cfg.Target, r.Client, r.MaxInFlight)
	switch {
	case r.Segment != nil:
		fmt.Fprintf(w, "Segment %s: arrivals (closed: users) numbered %d, %d + %d, … of the schedule, from %s; merge the %d segments' results for the whole\n",
			r.Segment, r.Segment.Index, r.Segment.Index, r.Segment.Count, r.StartAt.UTC().Format(time.RFC3339Nano), r.Segment.Count)
	case r.MergedSegments > 0:
		fmt.Fprintf(w, "Merged from %d segments started at %s (queue figures: segment 0's samples of the shared station)\n",
			r.MergedSegments, r.StartAt.UTC().Format(time.RFC3339Nano))
	}
	if r.Partial {
		fmt.Fprintln(w, "PARTIAL: the run was interrupted; figures are for the time it ran.")
	}
	fmt.Fprintf(w, "Requests %d: on time %d, rejected %d, served too late %d, unfinished %d", r.Requests, r.OnTime, r.Rejected, r.TooLate, r.Unfinished)
	for _, o := range []struct {
		n    int
		name string
	}{{r.Cancelled, "cancelled by the server"}, {r.TimedOut, "timed out (server outcome unknown)"},
		{r.Unjoined, "unjoined (not in the server's log)"}, {r.ErrorStatus, "error status"}, {r.TransportErrors, "transport errors"}} {
		if o.n > 0 {
			fmt.Fprintf(w, ", %s %d", o.name, o.n)
		}
	}
	fmt.Fprintln(w)
	if len(r.StatusCodes) > 0 {
		codes := slices.Sorted(maps.Keys(r.StatusCodes))
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d × %d", r.StatusCodes[c], c))
		}
		fmt.Fprintf(w, "Error statuses: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "Generator: %d scheduled, %d dropped (in-flight cap), %d behind (due, not sent before the end), %d started late, max send lag %.1f ms\n",
		r.Scheduled, r.Dropped, r.Behind, r.LateStarts, r.MaxSendLagMs)
	for _, l := range []struct {
		name string
		l    Latency
	}{{"from the scheduled time", r.LatencyFromSchedule}, {"from sending", r.LatencyFromSend}} {
		if l.l.Count == 0 {
			continue
		}
		fmt.Fprintf(w, "Latency of %d on-time requests %s (model s): p50 %.3f, p90 %.3f, p95 %.3f, p99 %.3f, p99.9 %.3f, max %.3f\n",
			l.l.Count, l.name, l.l.P50, l.l.P90, l.l.P95, l.l.P99, l.l.P999, l.l.Max)
	}
	if !r.ServerIdentified {
		fmt.Fprintln(w, "The target is not a loadlab mock service: only client-side figures; it was sent the load and nothing else.")
		fmt.Fprintln(w, "Requests the client gave up on are timed_out: whether the server did the work is unknown.")
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "Server: wasted worker-seconds %.1f; peak queue %d; queue full at %s; empty again at %s\n",
			r.WastedWorkerS, r.PeakQueue, opt(r.QueueFullAtS), opt(r.QueueEmptyAtS))
		if !r.ServerJoined {
			fmt.Fprintf(w, "The server's request log did not hold %d of the requests the client gave up on: they are unjoined.\n", r.Unjoined)
		}
	}
	fmt.Fprintln(w)
	val := func(f func(Second) int) []int {
		out := make([]int, len(r.Timeline))
		for i, s := range r.Timeline {
			out[i] = f(s)
		}
		return out
	}
	return models.WriteChart(w, []models.ChartRow{
		{Name: "arrivals", Values: val(func(s Second) int { return s.Arrivals })},
		{Name: "queue", Values: val(func(s Second) int { return s.Queue })},
		{Name: "on time", Values: val(func(s Second) int { return s.OnTime })},
		{Name: "rejected", Values: val(func(s Second) int { return s.Rejected })},
		{Name: "too late", Values: val(func(s Second) int { return s.TooLate })},
		{Name: "dropped", Values: val(func(s Second) int { return s.Dropped })},
	})
}

func opt(p *int) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprintf("%d s", *p)
}

// WriteComparison prints the model and the real run side by side, with the
// difference per outcome in requests and as a share of the model's requests.
func WriteComparison(w io.Writer, model models.AdmissionResult, real Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "outcome\tmodel\treal\treal − model\tof requests\t")
	row := func(name string, m, r int) {
		share := 0.0
		if model.Requests > 0 {
			share = 100 * float64(r-m) / float64(model.Requests)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%+d\t%+.1f%%\t\n", name, m, r, r-m, share)
	}
	row("requests", model.Requests, real.Requests)
	row(string(OnTime), model.OnTime, real.OnTime)
	row(string(Rejected), model.Rejected, real.Rejected)
	row(string(TooLate), model.TooLate, real.TooLate)
	row(string(Unfinished), model.Unfinished, real.Unfinished)
	for _, o := range Outcomes[4:] { // the outcomes the model does not have
		if n := real.Outcomes()[o]; n > 0 {
			fmt.Fprintf(tw, "%s (not in the model)\t\t%d\t\t\t\n", o, n)
		}
	}
	row("peak_queue", model.PeakQueue, real.PeakQueue)
	fmt.Fprintf(tw, "wasted_worker_s\t%d\t%.1f\t%+.1f\t\t\n", model.WastedWorkerS, real.WastedWorkerS, real.WastedWorkerS-float64(model.WastedWorkerS))
	if model.P95LatencyS != nil && real.P95LatencyS != nil {
		fmt.Fprintf(tw, "p95_latency_s\t%d\t%.2f\t%+.2f\t\t\n", *model.P95LatencyS, *real.P95LatencyS, *real.P95LatencyS-float64(*model.P95LatencyS))
	}
	return tw.Flush()
}
