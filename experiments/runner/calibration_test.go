package runner

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// A calibration runs C2 and C4, healthy, at time scale 1 and at the
// experiment's on mock services of its own, and the report shows it; the
// verdicts are gated on it.
func TestCalibrationMeasuresTheBias(t *testing.T) {
	t.Parallel() // it checks that the bias is measured and gates, not its size
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", exptest.TinyHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	started := 0
	r := mustNew(t, Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: *mockCfg, Calibration: Calibration{Runs: 1},
		Mocks: startFunc(func(c config.Config) (string, func() error, error) {
			started++
			m := mocktest.Start(t, c)
			return m.URL, m.Stop, nil
		})}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cal := res.Calibration
	if started != 2 || cal == nil || cal.Skipped != "" || len(cal.Strategies) != 2 {
		t.Fatalf("%d mocks started; calibration %+v", started, cal)
	}
	for _, s := range cal.Strategies {
		if s.AtOne.N != 1 || s.AtScale.N != 1 || math.IsNaN(s.Bias) || s.AtOne.Median <= 0 {
			t.Errorf("%s: %+v", s.Strategy, s)
		}
	}
	why := cal.Exceeded()
	for _, v := range res.Verdicts {
		if gated := v.Verdict == judge.Inconclusive && strings.Contains(v.Note, "time-scale bias"); gated != (why != "") {
			t.Errorf("%s: %s (%s) with the bias %q", v.ID, v.Verdict, v.Note, why)
		}
	}
	var md bytes.Buffer
	report.WriteMarkdown(&md, res)
	if !strings.Contains(md.String(), "| C4 |") || !strings.Contains(md.String(), "## Time-scale calibration") {
		t.Errorf("report lacks the calibration:\n%s", md.String())
	}
	t.Logf("biases: C2 %+.1f%%, C4 %+.1f%% (%s)", 100*cal.Strategies[0].Bias, 100*cal.Strategies[1].Bias, why)
}
