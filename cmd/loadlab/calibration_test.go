package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// rateHypothesis reads accepted records per second, which a time scale
// can bias: the calibration gates it.
const rateHypothesis = "  - id: B\n    claim: c\n    source: s\n    metric: accepted_per_second\n" +
	"    cell: {strategy: C4, scenario: healthy, cpu: inherit}\n    versus: {strategy: C2, scenario: healthy, cpu: inherit}\n" +
	"    compare: ratio\n    op: \">\"\n    threshold: 0\n"

// A calibration that cannot run (its mock service at time scale 1 does
// not answer) fails closed: the verdict on rates is provisional, the
// command says so and exits 1, and the count of 503s stands; loadlab check
// --accept-uncalibrated makes it final without running anything, exits 0,
// and the report says who accepted it.
func TestUncalibratedExperimentExitsOneUntilAccepted(t *testing.T) {
	t.Parallel() // it checks statuses, not speed
	dir := t.TempDir()
	spec, hyp := lockedTinyExperimentWith(t, dir, 3, rateHypothesis)
	out := filepath.Join(dir, "out")
	// A child process: the experiment's own children are this binary.
	code, _, errb := loadlabChild(t, "experiment", "--file", spec, "--hypotheses", hyp, "--out", out, "--real-time-target", "http://127.0.0.1:1")
	if code != exitFailed || !strings.Contains(errb, "1 verdict is provisional") || !strings.Contains(errb, "--accept-uncalibrated") {
		t.Fatalf("exit %d, stderr %q; want 1 saying the verdict is provisional and how to accept it", code, errb)
	}
	res, err := resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]resultsfile.CalibrationLabel{}
	for _, v := range res.Verdicts {
		labels[v.ID] = v.Calibration
	}
	if labels["A"] != "" || labels["B"] != resultsfile.LabelProvisional || res.TimeScaleBias == nil || res.TimeScaleBias.Incomplete == "" {
		t.Fatalf("labels %v, calibration %+v; want A unlabelled, B provisional, the calibration incomplete", labels, res.TimeScaleBias)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "--accept-uncalibrated", out}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "(uncalibrated, accepted)") {
		t.Fatalf("check --accept-uncalibrated: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	res, err = resultsfile.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if judge.Provisional(res.Verdicts) != 0 || !strings.HasPrefix(res.TimeScaleBias.AcceptedBy, "loadlab check --accept-uncalibrated") {
		t.Errorf("after acceptance: %d provisional, accepted by %q", judge.Provisional(res.Verdicts), res.TimeScaleBias.AcceptedBy)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "ACCEPTED after it, by loadlab check --accept-uncalibrated") {
		t.Errorf("the report does not say who accepted the uncalibrated verdicts (%v)", err)
	}
	// The accepted folder checks as it stands.
	if code := run([]string{"check", out}, &stdout, &stderr); code != 0 {
		t.Errorf("check after acceptance: exit %d, %q", code, stderr.String())
	}
}
