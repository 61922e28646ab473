package loadresult

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
)

// Saturation says that the generator could not keep its schedule, the rate
// it reached, and what to do.
func Saturation(r loadgen.Result) string {
	return fmt.Sprintf("GENERATOR SATURATED: it sent %.0f requests per real second of the %.0f scheduled (%.1f%% behind, %.1f%% started late): "+
		"the figures are those of a smaller load than the schedule's; give it a core of its own, lower the rate, or split the load into segments",
		r.SentPerRealSecond, r.PerRealSecond(r.Scheduled), 100*float64(r.Behind)/float64(max(r.Scheduled, 1)), 100*float64(r.LateStarts)/float64(max(r.Requests, 1)))
}

// WriteResult writes a load run's result for people: every outcome, what
// the generator could not do, latency percentiles, the server's figures,
// and a chart over time. The run's parameters are the result's own
// (Scenario, Arrivals, TimeScale, Target).
func WriteResult(w io.Writer, r loadgen.Result) error {
	fmt.Fprintf(w, "Real run: %s generator, %s arrivals, time scale %g, against %s (%s client, at most %d requests in flight)\n",
		r.Scenario.Mode, r.Arrivals, r.TimeScale, r.Target, r.Client, r.MaxInFlight)
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
	fmt.Fprintf(w, "Generator: %d scheduled, %d dropped (in-flight cap), %d behind (due, not sent in time), %d started late, max send lag %.1f ms; %.0f requests sent per real second\n",
		r.Scheduled, r.Dropped, r.Behind, r.LateStarts, r.MaxSendLagMs, r.SentPerRealSecond)
	if r.Saturated {
		fmt.Fprintln(w, Saturation(r))
	}
	for _, l := range []struct {
		name string
		l    loadgen.Latency
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
	val := func(f func(loadgen.Second) int) []int {
		out := make([]int, len(r.Timeline))
		for i, s := range r.Timeline {
			out[i] = f(s)
		}
		return out
	}
	return WriteChart(w, []ChartRow{
		{Name: "arrivals", Values: val(func(s loadgen.Second) int { return s.Arrivals })},
		{Name: "queue", Values: val(func(s loadgen.Second) int { return s.Queue })},
		{Name: "on time", Values: val(func(s loadgen.Second) int { return s.OnTime })},
		{Name: "rejected", Values: val(func(s loadgen.Second) int { return s.Rejected })},
		{Name: "too late", Values: val(func(s loadgen.Second) int { return s.TooLate })},
		{Name: "dropped", Values: val(func(s loadgen.Second) int { return s.Dropped })},
	})
}

func opt(p *int) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprintf("%d s", *p)
}

// ChartRow is one named series of a text chart, one value per second.
type ChartRow struct {
	Name   string
	Values []int
}

// WriteChart draws each row as one character per second, its height
// relative to the row's peak; "·" is zero, "?" a negative value (not
// measured). Below the rows an axis marks every tenth second.
func WriteChart(w io.Writer, rows []ChartRow) error {
	fmt.Fprintf(w, "One column per second (height relative to the row's peak):\n")
	n := 0
	for _, row := range rows {
		peak := 0
		for _, v := range row.Values {
			peak = max(peak, v)
		}
		n = max(n, len(row.Values))
		fmt.Fprintf(w, "%-9s %s  peak %d\n", row.Name, spark(row.Values, peak), peak)
	}
	_, err := fmt.Fprintf(w, "%-9s %s\n", "", axis(n))
	return err
}

var levels = []rune(" ▁▂▃▄▅▆▇█")

func spark(values []int, peak int) string {
	var b strings.Builder
	for _, v := range values {
		switch {
		case v < 0:
			b.WriteRune('?') // not measured
		case v == 0 || peak == 0:
			b.WriteRune('·')
		default:
			i := int(math.Ceil(float64(v) / float64(peak) * float64(len(levels)-1)))
			b.WriteRune(levels[i])
		}
	}
	return b.String()
}

// axis marks every tenth second.
func axis(n int) string {
	var b strings.Builder
	for t := 0; t < n; t++ {
		if t%10 == 0 {
			label := fmt.Sprint(t)
			b.WriteString(label)
			t += len(label) - 1
			continue
		}
		b.WriteByte(' ')
	}
	return b.String()
}
