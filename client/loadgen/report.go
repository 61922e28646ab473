package loadgen

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadlab/loadlab/experiments/models"
)

// WriteResult writes a load run's result for people: the four outcomes, what
// the generator could not do, the figures, and a chart over time.
func WriteResult(w io.Writer, cfg Config, r Result) error {
	fmt.Fprintf(w, "Real run: %s generator, %s arrivals, time scale %g, against %s\n",
		cfg.Scenario.Generator, cfg.Arrivals, cfg.TimeScale, cfg.Target)
	fmt.Fprintf(w, "Requests %d: on time %d, rejected %d, served too late %d, unfinished %d", r.Requests, r.OnTime, r.Rejected, r.TooLate, r.Unfinished)
	if !r.ServerJoined {
		fmt.Fprintf(w, ", timed out (server outcome unknown) %d", r.TimedOut)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Generator: %d scheduled, %d dropped (in-flight cap), %d started late, max send lag %.1f ms; %d transport errors\n",
		r.Scheduled, r.Dropped, r.LateStarts, r.MaxSendLagMs, r.Errors)
	p95 := "none"
	if r.P95LatencyS != nil {
		p95 = fmt.Sprintf("%.2f s", *r.P95LatencyS)
	}
	fmt.Fprintf(w, "p95 latency (on time, from the scheduled time) %s; wasted worker-seconds %.1f; peak queue %d; queue full at %s; empty again at %s\n",
		p95, r.WastedWorkerS, r.PeakQueue, opt(r.QueueFullAtS), opt(r.QueueEmptyAtS))
	if !r.ServerJoined {
		fmt.Fprintln(w, "The target keeps no request log: too_late cannot be told from unfinished for requests the client gave up on.")
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
	if !real.ServerJoined {
		fmt.Fprintf(tw, "timed_out (server outcome unknown)\t\t%d\t\t\t\n", real.TimedOut)
	}
	row("peak_queue", model.PeakQueue, real.PeakQueue)
	fmt.Fprintf(tw, "wasted_worker_s\t%d\t%.1f\t%+.1f\t\t\n", model.WastedWorkerS, real.WastedWorkerS, real.WastedWorkerS-float64(model.WastedWorkerS))
	if model.P95LatencyS != nil && real.P95LatencyS != nil {
		fmt.Fprintf(tw, "p95_latency_s\t%d\t%.2f\t%+.2f\t\t\n", *model.P95LatencyS, *real.P95LatencyS, *real.P95LatencyS-float64(*model.P95LatencyS))
	}
	return tw.Flush()
}
