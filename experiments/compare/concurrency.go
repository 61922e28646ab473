package compare

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Bounds of a concurrency replay: each workload is replayed in real time,
// and below MinReplayTimeScale a request's real overhead outweighs its
// workload (80 ms lab is 4 ms real at 0.05).
const (
	MaxReplayWorkloads = 1000
	MinReplayTimeScale = 0.05
)

// ConcurrencyReplay replays every workload of a concurrency scenario under
// every limit over real HTTP, beside the model's trials of the same
// workloads.
type ConcurrencyReplay struct {
	Scenario models.ConcurrencyScenario
	// Target is the base URL of a mock service that serves
	// ReplayEndpoint(Scenario, TimeScale), used by nothing else meanwhile.
	Target string
	// TimeScale multiplies every duration; figures stay in lab time.
	TimeScale float64
	// Dial opens the connections (nil: the system's dialer): an in-memory
	// wire, in tests whose clock is fake.
	Dial transport.Dialer
}

// Validate names the first bad field (a *field.Error): the scenario's as
// the model names them, then the replay's bounds (time_scale, and seed_to
// for the number of workloads).
func (r ConcurrencyReplay) Validate() error {
	if err := r.Scenario.Validate(); err != nil {
		return ModelField(err)
	}
	if err := api.CheckTimeScale(r.TimeScale); err != nil {
		return &field.Error{Field: "time_scale", Err: err}
	}
	if r.TimeScale < MinReplayTimeScale {
		return field.Errorf("time_scale", "%g is below %g: a request's real overhead (about 0.6 ms) would outweigh its workload",
			r.TimeScale, MinReplayTimeScale)
	}
	if n := uint64(r.Scenario.SeedTo-r.Scenario.SeedFrom) + 1; n > MaxReplayWorkloads {
		return field.Errorf("seed_to", "%d workloads; a replay replays at most %d", n, MaxReplayWorkloads)
	}
	return nil
}

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
	// finished within replay.NearTie of the client's deadline.
	NearTies int `json:"near_ties"`
	// Workloads whose completed or timed-out count differs from the
	// model's, and the largest relative difference of the two times.
	DifferCompleted int `json:"workloads_differing_completed"`
	DifferTimedOut  int `json:"workloads_differing_timed_out"`
	// DifferWithoutTie counts the workloads whose completed or timed-out
	// count differs from the model's by more than their near-ties:
	// differences timers do not explain.
	DifferWithoutTie    int            `json:"workloads_differing_without_near_tie"`
	MaxRelClientOutcome float64        `json:"max_rel_diff_client_outcome_ms"`
	MaxRelServerDrain   float64        `json:"max_rel_diff_server_drain_ms"`
	Trials              []replay.Trial `json:"trials"`
	// ModelTrials are the model's figures of the same workloads, in order.
	ModelTrials []models.ConcurrencyMetrics `json:"model_trials"`
}

// ConcurrencyResult is a replay beside the model: one Strategy per limit.
// Its JSON keys are in this order (sorted).
type ConcurrencyResult struct {
	Strategies []Strategy `json:"strategies"`
	TimeScale  float64    `json:"time_scale"`
	Workloads  int        `json:"workloads"`
}

// RunConcurrencyReplay replays every workload of r.Scenario under every
// limit against r.Target, and the model on the same workloads. It stops at
// the first replay that fails (ctx ended, a request answered other than
// 200 or not at all), with its error.
func RunConcurrencyReplay(ctx context.Context, r ConcurrencyReplay) (ConcurrencyResult, error) {
	if err := r.Validate(); err != nil {
		return ConcurrencyResult{}, fmt.Errorf("compare: %w", err)
	}
	sc := r.Scenario
	dist, _ := sc.Durations.Build() // valid: checked by Validate
	out := ConcurrencyResult{TimeScale: r.TimeScale, Workloads: int(sc.SeedTo-sc.SeedFrom) + 1}
	for _, limit := range sc.Limits {
		var model []models.ConcurrencyMetrics
		var real []replay.Trial
		cfg := replay.Config{Target: r.Target, Limit: limit, Timeout: sc.Timeout, TimeScale: r.TimeScale, Dial: r.Dial}
		for seed := uint64(sc.SeedFrom); seed <= uint64(sc.SeedTo); seed++ {
			w := models.Workload(dist, sc.Requests, uint32(seed))
			model = append(model, models.SimulateTrial(w, sc.Workers, limit, sc.Timeout))
			t, err := replay.Run(ctx, cfg, replay.Workload{Seed: uint32(seed), Durations: w})
			if err != nil {
				return out, err
			}
			real = append(real, t)
		}
		out.Strategies = append(out.Strategies, CompareStrategy(models.StrategyName(limit, sc.Requests), limit, model, real))
	}
	return out, nil
}

// metrics is a replayed trial's figures as the model's: the same figures
// under the same names.
func metrics(m replay.Metrics) models.ConcurrencyMetrics { return models.ConcurrencyMetrics(m) }

// CompareStrategy sets a limit's real trials beside the model's trials of
// the same workloads (in the same order).
func CompareStrategy(name string, limit int, model []models.ConcurrencyMetrics, real []replay.Trial) Strategy {
	s := Strategy{Name: name, Limit: limit, Trials: real, ModelTrials: model}
	s.Model.Median, s.Model.Min, s.Model.Max = models.SummarizeTrials(model)
	ms := make([]models.ConcurrencyMetrics, len(real))
	for i, t := range real {
		r, m := metrics(t.Metrics), model[i]
		ms[i] = r
		s.NearTies += t.NearTies
		if r.Completed != m.Completed {
			s.DifferCompleted++
		}
		if r.TimedOut != m.TimedOut {
			s.DifferTimedOut++
		}
		// Each near-tie can turn one request from completed to timed out
		// or back; a difference beyond that is not the timers'.
		if math.Abs(r.Completed-m.Completed) > float64(t.NearTies) || math.Abs(r.TimedOut-m.TimedOut) > float64(t.NearTies) {
			s.DifferWithoutTie++
		}
		s.MaxRelClientOutcome = max(s.MaxRelClientOutcome, rel(r.ClientOutcomeMs, m.ClientOutcomeMs))
		s.MaxRelServerDrain = max(s.MaxRelServerDrain, rel(r.ServerDrainMs, m.ServerDrainMs))
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

// WriteConcurrencyResult prints model and real side by side, per limit:
// each metric's median (min–max) over the workloads, and how the
// workloads differ.
func WriteConcurrencyResult(w io.Writer, r ConcurrencyResult) error {
	_, err := fmt.Fprintf(w, "Concurrency simulation replayed over real HTTP: %d workloads, time scale %g; times in lab ms,\nmedian (min–max) over the workloads.\n", r.Workloads, r.TimeScale)
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
	for _, s := range r.Strategies {
		fmt.Fprintf(w, "\n%s (limit %d)\n", s.Name, s.Limit)
		fmt.Fprintf(w, "  %-22s %-28s %-28s\n", "metric", "model", "real")
		for _, row := range rows {
			fmt.Fprintf(w, "  %-22s %-28s %-28s\n", row.name, stat(row.get(s.Model.Median), row.get(s.Model.Min), row.get(s.Model.Max)),
				stat(row.get(s.Real.Median), row.get(s.Real.Min), row.get(s.Real.Max)))
		}
		_, err = fmt.Fprintf(w, "  workloads differing: %d in completed, %d in timed_out (%d of them by more than their near-ties); largest difference %.2f%% in client_outcome_ms, %.2f%% in server_drain_ms; %d near-ties (server finished within %v, plus the issue-to-admission delay, of the client's deadline)\n",
			s.DifferCompleted, s.DifferTimedOut, s.DifferWithoutTie, 100*s.MaxRelClientOutcome, 100*s.MaxRelServerDrain, s.NearTies, replay.NearTie)
	}
	return err
}

func stat(med, lo, hi float64) string {
	f := func(x float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".") }
	if lo == hi {
		return f(med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(med), f(lo), f(hi))
}
