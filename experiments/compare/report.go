package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// WriteConcurrencyTable writes the scenario and the document's table of
// medians, then the minimum–maximum ranges. Times are rounded half up to
// whole milliseconds, as the document prints them.
func WriteConcurrencyTable(w io.Writer, s models.ConcurrencyScenario, rep models.ConcurrencyReport) error {
	n := int(s.SeedTo-s.SeedFrom) + 1
	fmt.Fprintf(w, "Scenario: %d requests per workload, %d workers, FIFO queue, client timeout %d ms from issue, timed-out work continues to completion\n",
		s.Requests, s.Workers, s.Timeout.Milliseconds())
	fmt.Fprintf(w, "Durations: %s\n", DescribeSpec(s.Durations))
	fmt.Fprintf(w, "Workloads: seeds %d through %d, Mulberry32\n", s.SeedFrom, s.SeedTo)
	fmt.Fprintf(w, "Scenario SHA-256: %s\n\n", s.SHA256())
	fmt.Fprintf(w, "Median trial value across %d shared seeded workloads\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Strategy\tCompleted\tTimed out\tClient outcome time\tServer drain time\tPeak in flight\tPeak server queue\tP95 queue wait\tWork after timeout\t")
	for _, st := range rep.Strategies {
		m := st.Median
		fmt.Fprintf(tw, "%s\t%s / %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", st.Name, num(m.Completed), s.Requests, num(m.TimedOut),
			secs(m.ClientOutcomeMs), secs(m.ServerDrainMs), num(m.PeakInFlight), num(m.PeakQueue),
			msOrSecs(m.P95QueueWaitMs), msOrSecs(m.WorkAfterTimeoutMs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nRange (minimum – maximum) across the same workloads\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Strategy\tCompleted\tTimed out\tClient outcome time\tServer drain time\tPeak server queue\tP95 queue wait\tMax queue wait\tWork after timeout\t")
	for _, st := range rep.Strategies {
		lo, hi := st.Min, st.Max
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", st.Name,
			rng(num(lo.Completed), num(hi.Completed)), rng(num(lo.TimedOut), num(hi.TimedOut)),
			rng(secs(lo.ClientOutcomeMs), secs(hi.ClientOutcomeMs)), rng(secs(lo.ServerDrainMs), secs(hi.ServerDrainMs)),
			rng(num(lo.PeakQueue), num(hi.PeakQueue)), rng(msOrSecs(lo.P95QueueWaitMs), msOrSecs(hi.P95QueueWaitMs)),
			rng(msOrSecs(lo.MaxQueueWaitMs), msOrSecs(hi.MaxQueueWaitMs)),
			rng(msOrSecs(lo.WorkAfterTimeoutMs), msOrSecs(hi.WorkAfterTimeoutMs)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nClient outcome time ends when every request has completed or timed out; server drain time includes work that continued after a client timeout.")
	return err
}

func rng(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + " – " + hi
}

// num prints a count; a median of an even count may be a half.
func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// secs prints milliseconds as seconds with three decimals, rounding the
// milliseconds half up first (11517.5 ms prints as 11.518 s).
func secs(ms float64) string {
	return fmt.Sprintf("%.3f s", math.Round(ms)/1000)
}

func msOrSecs(ms float64) string {
	if math.Round(ms) < 1000 {
		return fmt.Sprintf("%.0f ms", math.Round(ms))
	}
	return secs(ms)
}

// DescribeSpec describes a duration distribution in words.
func DescribeSpec(s latency.Spec) string {
	var out string
	switch s.Kind {
	case latency.KindFixed:
		out = "fixed " + s.Value.String()
	case latency.KindUniform:
		out = fmt.Sprintf("uniform %s–%s", s.Min, s.Max)
		if s.Resolution > 0 {
			out = fmt.Sprintf("from %d through %d ms", s.Min.Milliseconds(), s.Max.Milliseconds())
			if s.Resolution != time.Millisecond {
				out += fmt.Sprintf(" in steps of %s", s.Resolution)
			}
		}
	case latency.KindLogNormal:
		out = fmt.Sprintf("log-normal, median %s, spread %g", s.Median, s.Spread)
	case latency.KindMixture:
		total := 0.0
		for _, c := range s.Components {
			total += c.Weight
		}
		parts := make([]string, len(s.Components))
		for i, c := range s.Components {
			parts[i] = fmt.Sprintf("%g%% %s", 100*c.Weight/total, DescribeSpec(c.Spec))
		}
		out = strings.Join(parts, ", ")
	default:
		out = string(s.Kind)
	}
	if s.HangProbability > 0 {
		out += fmt.Sprintf("; %g%% hang %s", 100*s.HangProbability, s.HangDuration)
	}
	return out
}

// WriteAdmission writes the admission result for people: the scenario, the
// four outcomes, the figures, and a text chart of the run over time.
func WriteAdmission(w io.Writer, s models.AdmissionScenario, r models.AdmissionResult) error {
	capacity := float64(s.Workers) / float64(s.ServiceTime)
	if s.Generator == models.GeneratorOpen {
		fmt.Fprintf(w, "Scenario: open generator, %d/s, %d/s from %d s to %d s, then %d/s again\n",
			s.BaseRate, s.PeakRate, s.RampStart, s.RampEnd, s.BaseRate)
	} else {
		fmt.Fprintf(w, "Scenario: closed generator, %d users, each thinks %d s after a reply or timeout and %d s after a rejection\n",
			s.Users, s.Think, s.ThinkAfterRejection())
	}
	fmt.Fprintf(w, "Endpoint: %d workers × %d s service (%g requests/s), queue %d, client timeout %d s; %d s in one-second steps\n\n",
		s.Workers, s.ServiceTime, capacity, s.Queue, s.Timeout, s.Duration)
	fmt.Fprintf(w, "Requests %d: on time %d, rejected %d, served too late %d, unfinished %d\n",
		r.Requests, r.OnTime, r.Rejected, r.TooLate, r.Unfinished)
	fmt.Fprintf(w, "p95 latency (on time) %s; wasted worker-seconds %d; peak queue %d; queue full at %s; queue empty again at %s\n\n",
		optS(r.P95LatencyS), r.WastedWorkerS, r.PeakQueue, optS(r.QueueFullAtS), optS(r.QueueEmptyAtS))
	val := func(f func(models.Second) int) []int {
		out := make([]int, len(r.Timeline))
		for i, x := range r.Timeline {
			out[i] = f(x)
		}
		return out
	}
	return loadresult.WriteChart(w, []loadresult.ChartRow{
		{Name: "arrivals", Values: val(func(x models.Second) int { return x.Arrivals })},
		{Name: "queue", Values: val(func(x models.Second) int { return x.QueueLen })},
		{Name: "on time", Values: val(func(x models.Second) int { return x.OnTime })},
		{Name: "rejected", Values: val(func(x models.Second) int { return x.Rejected })},
		{Name: "too late", Values: val(func(x models.Second) int { return x.TooLate })},
	})
}

func optS(p *int) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprintf("%d s", *p)
}
