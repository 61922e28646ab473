package replay

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/loadlab/loadlab/experiments/models"
)

// Stats is the median, minimum and maximum of each metric over workloads.
type Stats struct {
	Median models.ConcurrencyMetrics `json:"median"`
	Min    models.ConcurrencyMetrics `json:"min"`
	Max    models.ConcurrencyMetrics `json:"max"`
}

// Strategy is one client limit, model and real side by side.
type Strategy struct {
	Name  string `json:"name"`
	Limit int    `json:"limit"`
	Model Stats  `json:"model"`
	Real  Stats  `json:"real"`
	// NearTies counts requests, over every workload, that the server
	// finished within NearTie of the client's deadline.
	NearTies int `json:"near_ties"`
	// Workloads whose completed or timed-out count differs from the
	// model's, and the largest relative difference of the two times.
	DifferCompleted int `json:"workloads_differing_completed"`
	DifferTimedOut  int `json:"workloads_differing_timed_out"`
	// DifferWithoutTie counts the workloads whose completed or timed-out
	// count differs from the model's by more than their near-ties:
	// differences timers do not explain.
	DifferWithoutTie    int     `json:"workloads_differing_without_near_tie"`
	MaxRelClientOutcome float64 `json:"max_rel_diff_client_outcome_ms"`
	MaxRelServerDrain   float64 `json:"max_rel_diff_server_drain_ms"`
	Trials              []Trial `json:"trials"`
	// ModelTrials are the model's figures of the same workloads, in order.
	ModelTrials []models.ConcurrencyMetrics `json:"model_trials"`
}

// Compare sets a limit's real trials beside the model's trials of the same
// workloads (in the same order).
func Compare(name string, limit int, model []models.ConcurrencyMetrics, real []Trial) Strategy {
	s := Strategy{Name: name, Limit: limit, Trials: real, ModelTrials: model}
	s.Model.Median, s.Model.Min, s.Model.Max = models.SummarizeTrials(model)
	ms := make([]models.ConcurrencyMetrics, len(real))
	for i, t := range real {
		ms[i] = t.Metrics
		s.NearTies += t.NearTies
		m := model[i]
		if t.Metrics.Completed != m.Completed {
			s.DifferCompleted++
		}
		if t.Metrics.TimedOut != m.TimedOut {
			s.DifferTimedOut++
		}
		// Each near-tie can turn one request from completed to timed out
		// or back; a difference beyond that is not the timers'.
		if math.Abs(t.Metrics.Completed-m.Completed) > float64(t.NearTies) || math.Abs(t.Metrics.TimedOut-m.TimedOut) > float64(t.NearTies) {
			s.DifferWithoutTie++
		}
		s.MaxRelClientOutcome = max(s.MaxRelClientOutcome, rel(t.Metrics.ClientOutcomeMs, m.ClientOutcomeMs))
		s.MaxRelServerDrain = max(s.MaxRelServerDrain, rel(t.Metrics.ServerDrainMs, m.ServerDrainMs))
	}
	s.Real.Median, s.Real.Min, s.Real.Max = models.SummarizeTrials(ms)
	return s
}

func rel(real, model float64) float64 {
	if model == 0 {
		return math.Abs(real)
	}
	return math.Abs(real-model) / model
}

// WriteTable prints model and real side by side, per limit: each metric's
// median (min–max) over the workloads, and how the workloads differ.
func WriteTable(w io.Writer, workloads int, scale float64, strategies []Strategy) {
	fmt.Fprintf(w, "Concurrency simulation replayed over real HTTP: %d workloads, time scale %g; times in lab ms,\nmedian (min–max) over the workloads.\n", workloads, scale)
	rows := []struct {
		name string
		get  func(models.ConcurrencyMetrics) float64
	}{
		{"completed", func(m models.ConcurrencyMetrics) float64 { return m.Completed }},
		{"timed_out", func(m models.ConcurrencyMetrics) float64 { return m.TimedOut }},
		{"client_outcome_ms", func(m models.ConcurrencyMetrics) float64 { return m.ClientOutcomeMs }},
		{"server_drain_ms", func(m models.ConcurrencyMetrics) float64 { return m.ServerDrainMs }},
		{"peak_in_flight", func(m models.ConcurrencyMetrics) float64 { return m.PeakInFlight }},
		{"peak_queue", func(m models.ConcurrencyMetrics) float64 { return m.PeakQueue }},
		{"p95_queue_wait_ms", func(m models.ConcurrencyMetrics) float64 { return m.P95QueueWaitMs }},
		{"max_queue_wait_ms", func(m models.ConcurrencyMetrics) float64 { return m.MaxQueueWaitMs }},
		{"work_after_timeout_ms", func(m models.ConcurrencyMetrics) float64 { return m.WorkAfterTimeoutMs }},
	}
	for _, s := range strategies {
		fmt.Fprintf(w, "\n%s (limit %d)\n", s.Name, s.Limit)
		fmt.Fprintf(w, "  %-22s %-28s %-28s\n", "metric", "model", "real")
		for _, r := range rows {
			fmt.Fprintf(w, "  %-22s %-28s %-28s\n", r.name, stat(r.get(s.Model.Median), r.get(s.Model.Min), r.get(s.Model.Max)),
				stat(r.get(s.Real.Median), r.get(s.Real.Min), r.get(s.Real.Max)))
		}
		fmt.Fprintf(w, "  workloads differing: %d in completed, %d in timed_out (%d of them by more than their near-ties); largest difference %.2f%% in client_outcome_ms, %.2f%% in server_drain_ms; %d near-ties (server finished within %v, plus the issue-to-admission delay, of the client's deadline)\n",
			s.DifferCompleted, s.DifferTimedOut, s.DifferWithoutTie, 100*s.MaxRelClientOutcome, 100*s.MaxRelServerDrain, s.NearTies, NearTie)
	}
}

func stat(med, lo, hi float64) string {
	f := func(x float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".") }
	if lo == hi {
		return f(med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(med), f(lo), f(hi))
}
