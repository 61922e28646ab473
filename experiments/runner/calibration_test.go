package runner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// calibratedTiny is TinySpec with 2 calibration pairs and a wide limit,
// and TinyRateHypotheses, whose T3 reads rates.
func calibratedTiny(t *testing.T) (design.Spec, []design.Hypothesis) {
	t.Helper()
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec+"calibration: {pairs: 2, max_bias: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", exptest.TinyRateHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	return spec, hs
}

// The calibration runs the first pairs of every cell a hypothesis on rates
// reads again at time scale 1, right after each, on one mock service of
// its own, and measures each cell's bias with its interval; only the
// verdict on rates is gated; check recomputes the biases from the runs at
// time scale 1, and an edited one fails it; the report shows them.
func TestCalibrationMeasuresTheBiasCellByCell(t *testing.T) {
	t.Parallel() // it checks that the bias is measured and gates, not its size
	bin := exptest.BuildLoadlab(t)
	spec, hs := calibratedTiny(t)
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	started, measured := 0, 0
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg,
		Mocks: startFunc(func(c config.Config) (string, func() error, error) {
			started++
			if c.TimeScale != 1 {
				t.Errorf("calibration mock at time scale %g", c.TimeScale)
			}
			m := mocktest.Start(t, mocktest.Options{Config: c})
			return m.URL, m.Stop, nil
		})}, heardBias{measured: &measured})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := res.TimeScaleBias
	if started != 1 || b == nil || b.Skipped != "" || b.Incomplete != "" || len(b.Twins) != 4 || len(b.Measured) != 2 || measured != 2 {
		t.Fatalf("%d mocks started, %d biases heard; calibration %+v", started, measured, b)
	}
	for _, m := range b.Measured {
		if len(m.Ratios) != 2 || m.Interval == nil || m.Interval.Coverage != 0.5 || m.State == resultsfile.BiasUnmeasured {
			t.Errorf("%s: %+v", m.Cell, m)
		}
	}
	for _, v := range res.Verdicts {
		if timed := v.ID == "T3"; !timed && v.Calibration != "" {
			t.Errorf("%s reads no rate, and is labelled %q", v.ID, v.Calibration)
		}
	}
	t.Logf("biases: %s %+.1f%%, %s %+.1f%%; T3 %s (%q)", b.Measured[0].Cell, 100*b.Measured[0].Bias, b.Measured[1].Cell, 100*b.Measured[1].Bias,
		res.Verdicts[2].Verdict, res.Verdicts[2].Calibration)
	if _, err := judge.Check(res, *mockCfg); err != nil {
		t.Fatalf("check: %v", err)
	}
	edited := *res
	eb := *b
	eb.Twins = append([]resultsfile.RunRecord(nil), b.Twins...)
	eb.Twins[0].Metrics = map[string]float64{"accepted_per_second": 1}
	edited.TimeScaleBias = &eb
	if _, err := judge.Check(&edited, *mockCfg); err == nil || !strings.Contains(err.Error(), "twin run 1") {
		t.Errorf("check of an edited run at time scale 1: %v", err)
	}
	var md bytes.Buffer
	report.WriteMarkdown(&md, res)
	if !strings.Contains(md.String(), "## Time-scale calibration") || !strings.Contains(md.String(), b.Measured[0].Cell.String()) {
		t.Errorf("report lacks the calibration:\n%s", md.String())
	}
}

// A calibration that cannot run (no mock service at time scale 1 starts)
// fails closed: the verdict on rates is provisional, the others stand.
func TestCalibrationThatCannotRunLeavesVerdictsProvisional(t *testing.T) {
	t.Parallel() // it checks statuses, not speed
	bin := exptest.BuildLoadlab(t)
	spec, hs := calibratedTiny(t)
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg,
		Mocks: startFunc(func(config.Config) (string, func() error, error) { return "", nil, errors.New("no port") })}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := res.TimeScaleBias
	if b.Incomplete == "" || !strings.Contains(b.Incomplete, "no port") || len(b.Twins) != 0 {
		t.Fatalf("calibration %+v", b)
	}
	for _, v := range res.Verdicts {
		want := resultsfile.CalibrationLabel("")
		if v.ID == "T3" {
			want = resultsfile.LabelProvisional
		}
		if v.Calibration != want {
			t.Errorf("%s: %s %q (%s); want %q", v.ID, v.Verdict, v.Calibration, v.Note, want)
		}
	}
	if judge.Provisional(res.Verdicts) != 1 {
		t.Errorf("%d provisional verdicts, want 1", judge.Provisional(res.Verdicts))
	}
}

// heardBias counts the biases the runner reports as they are measured.
type heardBias struct {
	NoProgress
	measured *int
}

func (h heardBias) BiasMeasured(resultsfile.CellBias, float64) { *h.measured++ }

// Cells in real time run at time scale 1 on the mock service the
// calibration's twins use, their lab seconds real ones; they need no
// calibration, and check recomputes them at time scale 1. Without that
// mock service they fail, saying why, and the verdicts that read them are
// inconclusive.
func TestRealTimeCellsRunAtTimeScaleOne(t *testing.T) {
	t.Parallel() // it checks scales and statuses, not speed
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	// A limit no bias at time scale 0.05 under -race reaches: the test is of
	// which cells run where and which are calibrated, not of the bias.
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec+
		"calibration: {pairs: 2, max_bias: 100}\nreal_time:\n  - {strategies: [C2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", exptest.TinyRateHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	started := 0
	mocks := startFunc(func(c config.Config) (string, func() error, error) {
		started++
		m := mocktest.Start(t, mocktest.Options{Config: c})
		return m.URL, m.Stop, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg, Mocks: mocks}, nil).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2 := design.Cell{Strategy: "C2", Scenario: "slow-write", CPU: "cpus-1"}
	if b := res.TimeScaleBias; started != 1 || len(b.Cells) != 1 || b.Cells[0] == c2 || len(b.Twins) != 2 {
		t.Fatalf("%d mocks started; calibrated %v with %d twins; want one mock, C4 alone calibrated", started, b.Cells, len(b.Twins))
	}
	for _, r := range res.Runs {
		lab, real := r.Metrics["duration_seconds"], r.Client.DurationSeconds
		if inReal := r.Cell == c2; !r.Valid() || inReal != (lab == real) {
			t.Errorf("%s run %d (%s): %g lab s over %g real s", r.Cell, r.Run, r.Status, lab, real)
		}
	}
	for _, v := range res.Verdicts {
		if v.Calibration != "" {
			t.Errorf("%s: labelled %q (%s): C2 in real time has no bias, C4's is within a limit of 10000%%", v.ID, v.Calibration, v.Note)
		}
	}
	if _, err := judge.Check(res, *mockCfg); err != nil {
		t.Fatalf("check: %v", err)
	}
	// No mock service at time scale 1: C2's runs fail, saying why.
	res, err = mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg,
		Mocks: startFunc(func(config.Config) (string, func() error, error) { return "", nil, errors.New("no port") })}, nil).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.Cell == c2 && (r.Status != resultsfile.RunFailed || !strings.Contains(r.Reason, "runs in real time, and the mock service at time scale 1 did not start: no port")) {
			t.Errorf("C2 run %d without its mock service: %s %q", r.Run, r.Status, r.Reason)
		}
	}
	if v := res.Verdicts[2]; v.ID != "T3" || v.Verdict != resultsfile.Inconclusive {
		t.Errorf("%s reads C2's failed runs: %s", v.ID, v.Verdict)
	}
}
