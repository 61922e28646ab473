package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Defaults of the time-scale calibration.
const (
	DefaultCalibrationRuns = 3
	// DefaultMaxBias is the largest time-scale bias, as a fraction of the
	// accepted rate at time scale 1, under which an experiment judges.
	DefaultMaxBias = 0.02
)

// DefaultCalibrationStrategies are measured at time scale 1 and at the
// experiment's unless the runner names others: the strategy that waits
// least (C2) and the one that waits most (C4), whose biases differed most
// when the bias was unmeasured.
var DefaultCalibrationStrategies = []string{"C2", "C4"}

// Calibration is the measured bias of an experiment's time scale: how much
// the accepted rate per lab second of a healthy run at the experiment's
// time scale differs from the same run at time scale 1, where a fixed
// real-time cost per call (a round trip, timers) weighs least.
type Calibration struct {
	TimeScale float64 `json:"time_scale"`
	Runs      int     `json:"runs"`
	MaxBias   float64 `json:"max_bias"`
	CPU       string  `json:"cpu"`
	// Accepted: the user accepted a bias beyond MaxBias (--accept-bias).
	Accepted   bool           `json:"accepted"`
	Strategies []StrategyBias `json:"strategies"`
	// Skipped says why the bias was not measured, when it was not.
	Skipped string `json:"skipped,omitempty"`
}

// StrategyBias is one strategy's healthy runs at both time scales.
type StrategyBias struct {
	Strategy string `json:"strategy"`
	// Accepted records per lab second.
	AtOne   Stat `json:"at_time_scale_1"`
	AtScale Stat `json:"at_time_scale"`
	// Bias is median at the time scale / median at 1 − 1; Unmeasured when
	// either side had no valid run (then Bias is 0 and means nothing).
	Bias       float64  `json:"bias"`
	Unmeasured bool     `json:"unmeasured,omitempty"`
	Failed     []string `json:"failed,omitempty"`
}

// Exceeded names the largest bias beyond MaxBias, or "" when every bias
// is within it. A strategy measured in no run counts as beyond.
func (c *Calibration) Exceeded() string {
	if c == nil || c.Skipped != "" {
		return ""
	}
	worst, name := 0.0, ""
	for _, s := range c.Strategies {
		b := math.Abs(s.Bias)
		if s.Unmeasured || math.IsNaN(b) {
			return fmt.Sprintf("time-scale bias of %s not measured (%d runs failed)", s.Strategy, len(s.Failed))
		}
		if b > c.MaxBias && b > worst {
			worst, name = b, s.Strategy
		}
	}
	if name == "" {
		return ""
	}
	return fmt.Sprintf("time-scale bias %+.1f%% for %s at time scale %g (limit %.1f%%)",
		100*c.bias(name), name, c.TimeScale, 100*c.MaxBias)
}

func (c *Calibration) bias(strategy string) float64 {
	for _, s := range c.Strategies {
		if s.Strategy == strategy {
			return s.Bias
		}
	}
	return math.NaN()
}

// gate makes every verdict inconclusive when the calibration found a bias
// beyond its limit that the user did not accept.
func gate(vs []Verdict, cal *Calibration) []Verdict {
	why := cal.Exceeded()
	if why == "" || cal.Accepted {
		return vs
	}
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		v.Verdict, v.Note = Inconclusive, "inconclusive: "+why
		out[i] = v
	}
	return out
}

// calibrate runs the calibration's strategies, healthy, on the first CPU
// setting, alternating between a mock service at time scale 1 and one at
// the experiment's, runs times each. It starts both mock services with
// StartMock. At time scale 1 there is nothing to measure.
func (r *Runner) calibrate(ctx context.Context, mockCfg config.Config) *Calibration {
	cal := &Calibration{TimeScale: r.Spec.TimeScale, Runs: r.CalibrationRuns, MaxBias: r.MaxBias,
		CPU: r.Spec.CPUs[0].Name, Accepted: r.AcceptBias}
	if cal.MaxBias <= 0 {
		cal.MaxBias = DefaultMaxBias
	}
	switch {
	case r.Spec.TimeScale == 1:
		cal.Skipped = "the experiment runs at time scale 1"
		return cal
	case r.CalibrationRuns <= 0:
		cal.Skipped = "calibration turned off (--calibration-runs 0): the time-scale bias is not measured"
		return cal
	case r.StartMock == nil:
		cal.Skipped = "no way to start mock services for the calibration"
		return cal
	}
	strategies := r.CalibrationStrategies
	if len(strategies) == 0 {
		strategies = DefaultCalibrationStrategies
	}
	mocks := map[float64]api.Client{}
	for _, scale := range []float64{1, r.Spec.TimeScale} {
		c := mockCfg
		c.TimeScale, c.Profile = scale, config.ProfileHealthy
		url, stop, err := r.StartMock(c)
		if err != nil {
			cal.Skipped = fmt.Sprintf("mock service at time scale %g: %v", scale, err)
			return cal
		}
		defer stop()
		mocks[scale] = api.Client{BaseURL: url}
	}
	vals := map[string]map[float64][]float64{}
	failed := map[string][]string{}
	for run := 1; run <= r.CalibrationRuns; run++ {
		for _, st := range strategies {
			if vals[st] == nil {
				vals[st] = map[float64][]float64{}
			}
			for _, scale := range []float64{1, r.Spec.TimeScale} {
				if ctx.Err() != nil {
					cal.Skipped = "interrupted"
					return cal
				}
				cell := Cell{Strategy: st, Scenario: config.ProfileHealthy, CPU: cal.CPU}
				rec := r.runAt(ctx, mocks[scale], scale, mockCfg, cell, run, nil)
				if !rec.Valid() {
					failed[st] = append(failed[st], fmt.Sprintf("run %d at time scale %g: %s: %s", run, scale, rec.Status, rec.Reason))
					continue
				}
				vals[st][scale] = append(vals[st][scale], rec.Metrics["accepted_per_second"])
			}
		}
		if r.Progress != nil {
			r.Progress(Progress{Calibrating: true, Done: run, Total: r.CalibrationRuns})
		}
	}
	for _, st := range strategies {
		sb := StrategyBias{Strategy: st, Failed: failed[st]}
		if a, b := vals[st][1], vals[st][r.Spec.TimeScale]; len(a) == 0 || len(b) == 0 {
			sb.Unmeasured = true // no NaN: results.json must still be written
		} else {
			sb.AtOne, sb.AtScale = Summarize(a), Summarize(b)
			sb.Bias = sb.AtScale.Median/sb.AtOne.Median - 1
		}
		cal.Strategies = append(cal.Strategies, sb)
	}
	return cal
}

// Rejudge decides the verdicts of results from their runs' metrics, as the
// runner does: judged, gated by the calibration, labelled exploratory when
// the design is not the preregistered one.
func Rejudge(r *Results) []Verdict {
	rules := RulesRangeV1
	if len(r.Hypotheses) > 0 {
		rules = r.Hypotheses[0].Rules
	}
	return label(gate(Judge(r.Hypotheses, r.Runs, r.Experiment.Runs), r.Calibration), Exploratory(r.Lock, r.Experiment, rules))
}
