package runner

import (
	"context"
	"fmt"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// DefaultCalibrationRuns is the time-scale calibration's rounds unless
// the runner is told otherwise.
const DefaultCalibrationRuns = 3

// DefaultCalibrationStrategies are measured at time scale 1 and at the
// experiment's unless the runner names others: the strategy that waits
// least (C2) and the one that waits most (C4), whose biases differed most
// when the bias was unmeasured.
var DefaultCalibrationStrategies = []string{"C2", "C4"}

// calibrate runs the calibration's strategies, healthy, on the first CPU
// setting, alternating between a mock service at time scale 1 and one at
// the experiment's, Runs rounds. It starts both mock services with Mocks.
// At time scale 1 there is nothing to measure.
func (ex *execution) calibrate(ctx context.Context) *judge.Calibration {
	spec, how := ex.cfg.Spec, ex.cfg.Calibration
	cal := &judge.Calibration{TimeScale: spec.TimeScale, Runs: how.Runs, MaxBias: how.MaxBias,
		CPU: spec.CPUs[0].Name, Accepted: how.Accept}
	if cal.MaxBias <= 0 {
		cal.MaxBias = judge.DefaultMaxBias
	}
	switch {
	case spec.TimeScale == 1:
		cal.Skipped = "the experiment runs at time scale 1"
		return cal
	case how.Runs <= 0:
		cal.Skipped = "calibration turned off (0 rounds): the time-scale bias is not measured"
		return cal
	case ex.cfg.Mocks == nil:
		cal.Skipped = "no way to start mock services for the calibration"
		return cal
	}
	strategies := how.Strategies
	if len(strategies) == 0 {
		strategies = DefaultCalibrationStrategies
	}
	mocks := map[float64]api.Client{}
	for _, scale := range []float64{1, spec.TimeScale} {
		c := ex.cfg.MockConfig
		c.TimeScale, c.Profile = scale, config.ProfileHealthy
		url, stop, err := ex.cfg.Mocks.StartMock(c)
		if err != nil {
			cal.Skipped = fmt.Sprintf("mock service at time scale %g: %v", scale, err)
			return cal
		}
		defer stop()
		mocks[scale] = api.Client{BaseURL: url}
	}
	vals, failed, interrupted := ex.calibrationRounds(ctx, cal, strategies, mocks)
	if interrupted {
		cal.Skipped = "interrupted"
		return cal
	}
	for _, st := range strategies {
		sb := judge.StrategyBias{Strategy: st, Failed: failed[st]}
		if a, b := vals[st][1], vals[st][spec.TimeScale]; len(a) == 0 || len(b) == 0 {
			sb.Unmeasured = true // no NaN: results.json must still be written
		} else {
			sb.AtOne, sb.AtScale = judge.Summarize(a), judge.Summarize(b)
			sb.Bias = sb.AtScale.Median/sb.AtOne.Median - 1
		}
		cal.Strategies = append(cal.Strategies, sb)
	}
	return cal
}

// calibrationRounds runs the rounds: each strategy at time scale 1, then at
// the experiment's. It returns the accepted rates per strategy and scale,
// the failed runs per strategy, and whether ctx ended first.
func (ex *execution) calibrationRounds(ctx context.Context, cal *judge.Calibration, strategies []string, mocks map[float64]api.Client) (
	vals map[string]map[float64][]float64, failed map[string][]string, interrupted bool) {
	vals, failed = map[string]map[float64][]float64{}, map[string][]string{}
	for run := 1; run <= cal.Runs; run++ {
		for _, st := range strategies {
			if vals[st] == nil {
				vals[st] = map[float64][]float64{}
			}
			for _, scale := range []float64{1, cal.TimeScale} {
				if ctx.Err() != nil {
					return vals, failed, true
				}
				cell := design.Cell{Strategy: st, Scenario: config.ProfileHealthy, CPU: cal.CPU}
				rec := ex.runAt(ctx, mocks[scale], scale, cell, run)
				if !rec.Valid() {
					failed[st] = append(failed[st], fmt.Sprintf("run %d at time scale %g: %s: %s", run, scale, rec.Status, rec.Reason))
					continue
				}
				vals[st][scale] = append(vals[st][scale], rec.Metrics["accepted_per_second"])
			}
		}
		ex.progress.Calibrated(run, cal.Runs)
	}
	return vals, failed, false
}
