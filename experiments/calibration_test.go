package experiments

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

func TestGateMakesVerdictsInconclusiveBeyondTheLimit(t *testing.T) {
	vs := []Verdict{{ID: "a", Verdict: Supported}, {ID: "b", Verdict: Refuted}}
	within := &Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []StrategyBias{{Strategy: "C2", Bias: -0.01}, {Strategy: "C4", Bias: 0.015}}}
	beyond := &Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []StrategyBias{{Strategy: "C2", Bias: -0.01}, {Strategy: "C4", Bias: -0.05}}}
	accepted := *beyond
	accepted.Accepted = true
	unmeasured := &Calibration{TimeScale: 0.1, MaxBias: 0.02, Strategies: []StrategyBias{{Strategy: "C2", Bias: math.NaN()}}}
	for _, tt := range []struct {
		name   string
		cal    *Calibration
		judged bool
	}{
		{"within", within, true}, {"beyond", beyond, false}, {"accepted", &accepted, true},
		{"unmeasured strategy", unmeasured, false}, {"skipped", &Calibration{Skipped: "time scale 1"}, true}, {"none", nil, true},
	} {
		got := gate(vs, tt.cal)
		for i, v := range got {
			if tt.judged && v.Verdict != vs[i].Verdict || !tt.judged && (v.Verdict != Inconclusive || !strings.Contains(v.Note, "time-scale bias")) {
				t.Errorf("%s: %s is %s (%s)", tt.name, v.ID, v.Verdict, v.Note)
			}
		}
	}
	if why := beyond.Exceeded(); !strings.Contains(why, "-5.0% for C4") {
		t.Errorf("exceeded: %q", why)
	}
}

// A calibration runs C2 and C4, healthy, at time scale 1 and at the
// experiment's on mock services of its own, and the report shows it; the
// verdicts are gated on it.
func TestCalibrationMeasuresTheBias(t *testing.T) {
	t.Parallel() // it checks that the bias is measured and gates, not its size
	bin := buildLoadlab(t)
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := LoadHypotheses(writeFile(t, dir, "h.yaml", tinyHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := startMock(t, spec)
	started := 0
	r := &Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, MockConfig: mockCfg, CalibrationRuns: 1,
		StartMock: func(c config.Config) (string, func() error, error) {
			started++
			m := mocktest.Start(t, c)
			return m.URL, m.Stop, nil
		}}
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
		if gated := v.Verdict == Inconclusive && strings.Contains(v.Note, "time-scale bias"); gated != (why != "") {
			t.Errorf("%s: %s (%s) with the bias %q", v.ID, v.Verdict, v.Note, why)
		}
	}
	var md bytes.Buffer
	WriteMarkdown(&md, res)
	if !strings.Contains(md.String(), "| C4 |") || !strings.Contains(md.String(), "## Time-scale calibration") {
		t.Errorf("report lacks the calibration:\n%s", md.String())
	}
	t.Logf("biases: C2 %+.1f%%, C4 %+.1f%% (%s)", 100*cal.Strategies[0].Bias, 100*cal.Strategies[1].Bias, why)
}
