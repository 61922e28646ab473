package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// ErrNoRawData: a results file lacks the raw data a check needs.
var ErrNoRawData = errors.New("no raw data")

// Check recomputes stored results from their raw data: every run's metrics,
// reconciliation and status from its client result, server stats, quiet
// waits and resolved writes; every cell's summary; every verdict, matched by
// hypothesis id. It returns the recomputed verdicts and the first
// difference from what is stored (nil when none). Results of the first
// format are re-judged from their stored metrics only, as they always were.
// A run with neither a result nor a failure is ErrNoRawData.
func Check(r *resultsfile.Results, mockCfg config.Config) ([]resultsfile.Verdict, error) {
	if r.Format < resultsfile.ResultsFormat {
		// A file that says nothing of its format but holds runs of the
		// second is not let off with the lighter check.
		for _, run := range r.Runs {
			if run.Reconciliation != nil || run.QuietBefore != nil || run.Unknown != nil {
				return nil, fmt.Errorf("%w: results of format %d hold runs of format %d (reconciled): is \"format\" missing?", ErrNoRawData, r.Format, resultsfile.ResultsFormat)
			}
		}
		vs := Rejudge(r)
		return vs, compareVerdicts(vs, r.Verdicts)
	}
	runs, err := recheckRuns(r.Runs, r.Experiment, r.Experiment.ScaleOf, "")
	if err != nil {
		return nil, err
	}
	cells := Summaries(r.Experiment, runs, mockCfg, r.Advised)
	if len(cells) != len(r.Cells) {
		return nil, fmt.Errorf("%d cells recomputed, %d stored", len(cells), len(r.Cells))
	}
	for i := range cells {
		if err := compare("cell "+cells[i].Cell.String(), []any{"summary", cells[i], r.Cells[i]}); err != nil {
			return nil, err
		}
	}
	again := *r
	again.Runs = runs
	if b := r.TimeScaleBias; b != nil {
		recomputed, err := recheckBias(b, r.Experiment, r.Hypotheses, runs)
		if err != nil {
			return nil, err
		}
		again.TimeScaleBias = recomputed
	}
	vs := Rejudge(&again)
	return vs, compareVerdicts(vs, r.Verdicts)
}

// recheckRuns recomputes stored runs of an experiment, each at the time
// scale its cell ran at (scaleOf), from their raw data: each run's seed against the experiment's
// rule, and its metrics, reconciliation and status. what names the runs
// in errors ("twin " for the calibration's). A run with neither a result
// nor a failure is ErrNoRawData.
func recheckRuns(stored []resultsfile.RunRecord, spec design.Spec, scaleOf func(design.Cell) float64, what string) ([]resultsfile.RunRecord, error) {
	runs := make([]resultsfile.RunRecord, len(stored))
	for i, s := range stored {
		run := s
		name := fmt.Sprintf("%srun %d of %s", what, s.Run, s.Cell)
		if want := plan.RunSeed(spec, s.Run); s.Seed != want {
			return nil, fmt.Errorf("%s: seed %d, the experiment's rule gives %d", name, s.Seed, want)
		}
		switch {
		case s.Client == nil && s.Server == nil && s.Status == resultsfile.RunFailed:
			// The child failed before it produced a result: nothing to
			// recompute, the reason is the observation.
		case s.Client == nil || s.Server == nil || s.QuietBefore == nil || s.QuietAfter == nil || s.Unknown == nil:
			return nil, fmt.Errorf("%w: %s (%s) lacks its client result, server stats, waits for quiet or resolved writes", ErrNoRawData, name, s.Status)
		default:
			// Everything the status rests on is raw data of the run.
			run.Status, run.Reason = resultsfile.RunValid, ""
			run.Faulted = spec.Faulted(s.Cell.Scenario) // from the design, not the stored flag
			run.Metrics, run.Reconciliation = nil, nil
			Derive(&run, scaleOf(s.Cell))
			if err := compare(name, []any{
				"status", run.Status, s.Status,
				"reason", run.Reason, s.Reason,
				"metrics", run.Metrics, s.Metrics,
				"reconciliation", run.Reconciliation, s.Reconciliation,
			}); err != nil {
				return nil, err
			}
		}
		runs[i] = run
	}
	return runs, nil
}

// recheckBias recomputes the calibration from the design, its twins (at
// time scale 1) and the matrix's runs: its plan (pairs, limit, cells),
// each twin, each cell's bias; an edited figure is a difference.
func recheckBias(b *resultsfile.Bias, spec design.Spec, hs []design.Hypothesis, runs []resultsfile.RunRecord) (*resultsfile.Bias, error) {
	plan := spec.CalibrationOf()
	if b.Skipped == "" {
		if err := compare("the time-scale calibration", []any{
			"pairs", plan.Pairs, b.Pairs, "max_bias", plan.MaxBias, b.MaxBias,
			"cells", design.CalibratedCells(spec, hs), b.Cells}); err != nil {
			return nil, err
		}
	}
	twins, err := recheckRuns(b.Twins, spec, func(design.Cell) float64 { return 1 }, "twin ")
	if err != nil {
		return nil, err
	}
	again := *b
	again.Twins = twins
	again.Measured = nil // a skipped calibration measures nothing (the runner's finishBias)
	if b.Skipped == "" {
		again.Measured = MeasureBias(&again, runs)
	}
	if err := compare("the time-scale calibration", []any{"biases", again.Measured, b.Measured}); err != nil {
		return nil, err
	}
	return &again, nil
}

// compareVerdicts matches verdicts by hypothesis id.
func compareVerdicts(got, stored []resultsfile.Verdict) error {
	byID := map[string]resultsfile.Verdict{}
	for _, v := range stored {
		byID[v.ID] = v
	}
	if len(got) != len(stored) {
		return fmt.Errorf("%d verdicts recomputed, %d stored", len(got), len(stored))
	}
	for _, v := range got {
		s, ok := byID[v.ID]
		if !ok {
			return fmt.Errorf("verdict %s: not stored", v.ID)
		}
		if err := compare("verdict "+v.ID, []any{"verdict", v, s}); err != nil {
			return err
		}
	}
	return nil
}

// compare takes (name, recomputed, stored) triples and names the first
// pair that differs once both are written as JSON (as results.json holds
// them: floats to the last digit JSON keeps).
func compare(what string, triples []any) error {
	for i := 0; i+2 < len(triples); i += 3 {
		a, err := json.Marshal(triples[i+1])
		if err != nil {
			return fmt.Errorf("%s: %s recomputed: %w", what, triples[i], err)
		}
		b, err := json.Marshal(triples[i+2])
		if err != nil {
			return fmt.Errorf("%s: %s stored: %w", what, triples[i], err)
		}
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil || !reflect.DeepEqual(x, y) {
			return fmt.Errorf("%s: %s recomputed %s, stored %s", what, triples[i], clip(a), clip(b))
		}
	}
	return nil
}

// clip shortens a JSON text for a one-line message.
func clip(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
