package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// planBias is the calibration the experiment plans: its pairs, its limit,
// the cells its time-biased hypotheses read; skipped at time scale 1
// (nothing to calibrate) and with no pairs (uncalibrated).
func (r *Runner) planBias() *resultsfile.Bias {
	spec := r.cfg.Spec
	cal := spec.CalibrationOf()
	b := &resultsfile.Bias{TimeScale: spec.TimeScale, Pairs: cal.Pairs, MaxBias: cal.MaxBias,
		Cells:    design.CalibratedCells(spec, r.cfg.Hypotheses),
		Accepted: r.cfg.Calibration.Accept, AcceptedUncalibrated: r.cfg.Calibration.AcceptUncalibrated}
	switch {
	case spec.TimeScale == 1:
		b.Skipped = "the experiment runs at time scale 1: there is no time-scale bias"
	case cal.Pairs == 0:
		b.Skipped = "no calibration pairs: the verdicts on rates and durations are uncalibrated"
	}
	return b
}

// calibrating says whether the calibration is under way.
func (ex *execution) calibrating() bool {
	return ex.bias.Skipped == "" && ex.bias.Incomplete == "" && len(ex.bias.Cells) > 0
}

// startScaleOne starts the mock service at time scale 1 that the twins
// and the cells in real time run against; without one, a calibration is
// incomplete and the cells in real time fail (scaleOneMissing says why).
func (ex *execution) startScaleOne(ctx context.Context) (stop func()) {
	if !ex.calibrating() && !ex.cfg.Spec.NeedsScaleOne() || ex.cfg.Spec.Own != nil {
		return func() {} // an experiment on one's own services starts copies at each run's time scale
	}
	missing := func(why string) {
		ex.scaleOneMissing = why
		if ex.calibrating() {
			ex.bias.Incomplete = why
		}
	}
	if ex.cfg.Mocks == nil {
		missing("no mock service at time scale 1 could be started")
		return func() {}
	}
	cfg := ex.cfg.MockConfig
	cfg.TimeScale = 1
	url, stopMock, err := ex.cfg.Mocks.StartMock(cfg)
	if err != nil {
		missing(fmt.Sprintf("the mock service at time scale 1 did not start: %v", err))
		return func() {}
	}
	one := ex.mockClient(url)
	id, err := one.DiscoverWait(ctx, api.PathEnrich, ex.cfg.Wait)
	switch {
	case err != nil:
		missing(fmt.Sprintf("the mock service at time scale 1 (%s): %v", url, err))
	case id == nil:
		missing(fmt.Sprintf("%s is not a loadlab mock service", url))
	case id.TimeScale != 1:
		missing(fmt.Sprintf("the mock service at %s runs at time scale %g, not 1", url, id.TimeScale))
	default:
		ex.scaleOne = one
	}
	return func() { _ = stopMock() }
}

// at is the mock service and time scale cell c runs at: the experiment's,
// or, in real time, the one at time scale 1 (an error when it is missing).
func (ex *execution) at(c design.Cell) (api.Client, float64, error) {
	if ex.cfg.Spec.Own != nil {
		return ex.mock, ex.cfg.Spec.ScaleOf(c), nil
	}
	if ex.cfg.Spec.ScaleOf(c) != 1 || ex.cfg.Spec.TimeScale == 1 {
		return ex.mock, ex.cfg.Spec.TimeScale, nil
	}
	if ex.scaleOne.BaseURL == "" {
		return api.Client{}, 1, fmt.Errorf("it runs in real time, and %s", ex.scaleOneMissing)
	}
	return ex.scaleOne, 1, nil
}

// twin runs unit u again at time scale 1 when its cell is calibrated and
// its run is one of the pairs, right after it (same seed), keeps it in the
// journal, and, once the cell's last pair has run, measures the cell's
// bias and reports it.
func (ex *execution) twin(ctx context.Context, u plan.Unit, runs []resultsfile.RunRecord) error {
	if !ex.paired(u) {
		return nil
	}
	rec := ex.runAt(ctx, ex.scaleOne, 1, u.Cell, u.Run)
	if ctx.Err() != nil {
		return nil
	}
	ex.bias.Twins = append(ex.bias.Twins, rec)
	if err := ex.journal(rec, true); err != nil {
		return err
	}
	ex.reportBias(u, runs)
	return nil
}

// reportBias measures and reports unit u's cell's bias once its last pair
// has run.
func (ex *execution) reportBias(u plan.Unit, runs []resultsfile.RunRecord) {
	b := ex.bias
	if u.Run != b.Pairs {
		return
	}
	one := *b
	one.Cells = []design.Cell{u.Cell}
	if m := judge.MeasureBias(&one, runs); len(m) == 1 {
		ex.progress.BiasMeasured(m[0], b.MaxBias)
	}
}

// finishBias measures every calibrated cell's bias over the runs; an
// interruption leaves the calibration incomplete.
func (ex *execution) finishBias(ctx context.Context, runs []resultsfile.RunRecord) {
	b := ex.bias
	if b.Skipped != "" {
		return
	}
	if ctx.Err() != nil && b.Incomplete == "" {
		b.Incomplete = "interrupted"
	}
	b.Measured = judge.MeasureBias(b, runs)
}

// calibrationUnits are the calibrated cells' paired runs alone, in one
// machine's order (--calibration-only).
func (ex *execution) calibrationUnits() []plan.Unit {
	var out []plan.Unit
	for _, u := range plan.Units(ex.cfg.Spec) {
		if u.Run <= ex.bias.Pairs && slices.Contains(ex.bias.Cells, u.Cell) {
			out = append(out, u)
		}
	}
	return out
}
