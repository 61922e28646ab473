package judge

import (
	"testing"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// A calibration that was skipped (no pairs, as --calibration-runs 0 asks,
// or time scale 1) measured nothing, and check recomputes nothing for it:
// the committed results with their calibration turned off and their
// verdicts judged so check as they stand; an edited bias still does not.
func TestCheckOfASkippedCalibration(t *testing.T) {
	res, err := resultsfile.ReadResults("../results/container-v3/results.json")
	if err != nil {
		t.Fatal(err)
	}
	b := *res.TimeScaleBias
	if len(b.Cells) == 0 || b.Measured == nil {
		t.Fatalf("container-v3 has no calibration to skip: %+v", b)
	}
	b.Skipped, b.Pairs, b.Twins, b.Measured = "no calibration pairs: the verdicts on rates and durations are uncalibrated", 0, nil, nil
	res.TimeScaleBias = &b
	res.Verdicts = Rejudge(res)
	if _, err := Check(res, res.Experiment.MockConfig()); err != nil {
		t.Errorf("check of a skipped calibration: %v", err)
	}
	b.Measured = []resultsfile.CellBias{{Cell: b.Cells[0], State: resultsfile.BiasUnmeasured}}
	if _, err := Check(res, res.Experiment.MockConfig()); err == nil {
		t.Error("check of a skipped calibration with a bias written in: no difference found")
	}
}
