package probe

import (
	"math"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// synthetic makes steps at concurrencies ns from a throughput function,
// with rejections from rejectAt (0: none) and a p50 of svc at every step.
func synthetic(ns []int, x func(n float64) float64, rejectAt int, svc float64) []Step {
	var out []Step
	for _, n := range ns {
		s := Step{Concurrency: n, OKPerSecond: x(float64(n)), OK: 100, Requests: 100, P50Seconds: f(svc), P99Seconds: f(svc)}
		if rejectAt > 0 && n >= rejectAt {
			s.Rejected, s.RejectedPerSecond = 10, 50
		}
		out = append(out, s)
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

// A station of 6 workers and a 30 ms service time, behind a client that
// adds 0.6 ms: the knee is 6, rejections begin at 13, the service time is
// the lowest step's p50 and the plateau the station's capacity.
func TestAnalyseSystemOfRecordShape(t *testing.T) {
	x := func(n float64) float64 {
		if n < 6 {
			return n / 0.0306
		}
		if n == 6 {
			return 6 / 0.0306
		}
		return 200
	}
	// In shuffled order: Analyse sorts.
	steps := synthetic([]int{7, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13}, x, 13, 0.0306)
	a := Analyse(steps)
	if a.Knee == nil || *a.Knee != 6 {
		t.Errorf("knee %v (%s), want 6", a.Knee, a.KneeReason)
	}
	if a.RejectionsBeginAt == nil || *a.RejectionsBeginAt != 13 {
		t.Errorf("rejections begin at %v, want 13", a.RejectionsBeginAt)
	}
	if a.ServiceTimeSeconds == nil || *a.ServiceTimeSeconds != 0.0306 || a.ServiceTimeConcurrency != 1 {
		t.Errorf("service time %v at %d, want 0.0306 at 1", a.ServiceTimeSeconds, a.ServiceTimeConcurrency)
	}
	if a.PlateauPerSecond != 200 {
		t.Errorf("plateau %v, want 200", a.PlateauPerSecond)
	}
	if got := len(a.USL.StepsFitted); got != 12 {
		t.Errorf("fitted %d steps %v, want the 12 without rejections", got, a.USL.StepsFitted)
	}
}

// Throughput that grows with every step has no knee: coarse steps to 64
// (the enrichment API's 256 workers), dense ones, and a plateau reached
// only at the last step but one.
func TestNoKneeWhileThroughputRises(t *testing.T) {
	linear := func(n float64) float64 { return n / 0.125 }
	for name, tc := range map[string]struct {
		steps []Step
		why   string
	}{
		"coarse to 64": {synthetic([]int{1, 2, 4, 8, 16, 32, 48, 64}, linear, 0, 0.125), "still rising"},
		"dense to 64":  {synthetic(seq(1, 64), linear, 0, 0.125), "not established"},
		"plateau at the last step but one": {synthetic([]int{1, 2, 4, 8, 16, 18},
			func(n float64) float64 { return min(n, 16) / 0.125 }, 0, 0.125), "not established"},
	} {
		a := Analyse(tc.steps)
		if a.Knee != nil || !strings.Contains(a.KneeReason, tc.why) {
			t.Errorf("%s: knee %v, reason %q; want none, %q", name, a.Knee, a.KneeReason, tc.why)
		}
	}
}

// Sixteen workers probed at coarse steps: the knee is 16, and established
// by the steps above it.
func TestKneeAtWorkerCount(t *testing.T) {
	x := func(n float64) float64 { return min(n, 16) / 0.125 }
	a := Analyse(synthetic([]int{1, 2, 4, 8, 12, 14, 16, 24, 32, 48, 64}, x, 0, 0.125))
	if a.Knee == nil || *a.Knee != 16 {
		t.Errorf("knee %v (%s), want 16", a.Knee, a.KneeReason)
	}
}

// Many noisy steps on a flat plateau do not lift it to their maximum: the
// plateau is a median, so the knee stays where the throughput arrives.
func TestPlateauRobustToNoise(t *testing.T) {
	noise := []float64{0.03, -0.02, 0.01, -0.03, 0.04, 0.0, -0.01, 0.02, -0.04, 0.03, 0.01, -0.02}
	x := func(n float64) float64 {
		if n < 8 {
			return 10 * n
		}
		return 80 * (1 + noise[int(n)%len(noise)])
	}
	a := Analyse(synthetic(seq(1, 64), x, 0, 0.1))
	if math.Abs(a.PlateauPerSecond-80) > 80*0.015 {
		t.Errorf("plateau %.2f, want 80 ± 1.5%%", a.PlateauPerSecond)
	}
	// The median of the three highest steps (83.2 here, five steps have
	// it) would put the knee at 9: step 8's 76.8 is below 0.95 × 83.2.
	if a.Knee == nil || *a.Knee != 8 {
		t.Errorf("knee %v (%s), want 8", a.Knee, a.KneeReason)
	}
}

func TestAnalyseEmptyAndNoSuccess(t *testing.T) {
	a := Analyse(nil)
	if a.Knee != nil || a.KneeReason == "" || a.USL.FitOK || a.ServiceTimeSeconds != nil {
		t.Errorf("no steps: %+v", a)
	}
	a = Analyse([]Step{{Concurrency: 1, Requests: 5, Errors: 5}, {Concurrency: 2, Requests: 5, Errors: 5}})
	if a.Knee != nil || !strings.Contains(a.KneeReason, "no step had a success") || a.PlateauPerSecond != 0 {
		t.Errorf("no successes: knee %v %q, plateau %v", a.Knee, a.KneeReason, a.PlateauPerSecond)
	}
}

// A plateau at the probe's own rate limit is flagged.
func TestPlateauAtRateLimitNoted(t *testing.T) {
	steps := synthetic([]int{1, 2, 4, 8}, func(n float64) float64 { return min(n, 4) * 100 }, 0, 0.01)
	steps[2].AtRateLimit, steps[3].AtRateLimit = true, true
	a := Analyse(steps)
	if len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "--max-rate") {
		t.Errorf("notes %q, want one on --max-rate", a.Notes)
	}
}

// The fit recovers the parameters of an exact USL curve, and its peak.
func TestFitUSLRecoversParameters(t *testing.T) {
	const lambda, sigma, kappa = 100.0, 0.05, 0.002
	var n, x []float64
	for i := 1; i <= 40; i++ {
		v := float64(i)
		n, x = append(n, v), append(x, lambda*v/(1+sigma*(v-1)+kappa*v*(v-1)))
	}
	u := FitUSL(n, x)
	if !u.FitOK || u.Sigma == nil {
		t.Fatalf("fit %+v", u)
	}
	for name, got := range map[string][2]float64{"λ": {*u.LambdaPerSecond, lambda}, "σ": {*u.Sigma, sigma}, "κ": {*u.Kappa, kappa},
		"peak": {*u.PeakConcurrency, math.Sqrt((1 - sigma) / kappa)}, "r²": {*u.R2, 1}} {
		if math.Abs(got[0]-got[1]) > 1e-6*math.Max(1, got[1]) {
			t.Errorf("%s = %v, want %v", name, got[0], got[1])
		}
	}
}

// Superlinear growth would need σ < 0: σ is clamped to 0 and the other
// terms refitted; linear growth has no peak.
func TestFitUSLClampsAndNoPeak(t *testing.T) {
	var n, x []float64
	for i := 1; i <= 10; i++ {
		v := float64(i)
		n, x = append(n, v), append(x, 10*v*(1+0.02*v))
	}
	u := FitUSL(n, x)
	if u.Sigma == nil || *u.Sigma != 0 || *u.Kappa < 0 {
		t.Errorf("superlinear: σ %v κ %v, want σ clamped to 0, κ ≥ 0", u.Sigma, u.Kappa)
	}
	n, x = nil, nil
	for i := 1; i <= 10; i++ {
		n, x = append(n, float64(i)), append(x, 8*float64(i))
	}
	u = FitUSL(n, x)
	if !u.FitOK || u.PeakConcurrency != nil || *u.Kappa != 0 || math.Abs(*u.LambdaPerSecond-8) > 1e-9 {
		t.Errorf("linear: %+v, want a fit of λ 8, κ 0 and no peak", u)
	}
}

// A zigzag fits badly: reported as such, with the values found.
func TestFitUSLFitsBadly(t *testing.T) {
	n := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	x := []float64{50, 10, 60, 12, 55, 9, 58, 11}
	u := FitUSL(n, x)
	if u.FitOK || !strings.HasPrefix(u.Reason, "fits badly") || u.R2 == nil || *u.R2 >= MinR2 || u.Sigma == nil {
		t.Errorf("zigzag: %+v, want fit_ok false, fits badly, values reported", u)
	}
	u = FitUSL([]float64{1, 2}, []float64{10, 20})
	if u.FitOK || !strings.Contains(u.Reason, "too few") || u.Sigma != nil {
		t.Errorf("two steps: %+v, want no fit, too few", u)
	}
	// With the knee still measured from the steps, whatever the fit.
	steps := synthetic([]int{1, 2, 3, 4, 5, 6, 7, 8}, func(n float64) float64 { return x[int(n)-1] }, 0, 0.01)
	// Plateau: the median of 60, 55, 58 (the steps within 90% of 60);
	// step 3 is the first to reach 95% of it.
	if a := Analyse(steps); a.USL.FitOK || a.Knee == nil || *a.Knee != 3 || a.PlateauPerSecond != 58 {
		t.Errorf("zigzag analysis: fit ok %v, knee %v, plateau %v; want a bad fit, knee 3, plateau 58", a.USL.FitOK, a.Knee, a.PlateauPerSecond)
	}
}
