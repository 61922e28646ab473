package latency

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// Vectors printed by the JavaScript mulberry32 under Node.js:
// out = Math.round(r() * 4294967296) for the first five draws.
func TestMulberry32MatchesJavaScript(t *testing.T) {
	tests := []struct {
		seed uint32
		want []uint32
	}{
		{1, []uint32{2693262067, 11749833, 2265367787, 4213581821, 4159151403}},
		{42, []uint32{2581720956, 1925393290, 3661312704, 2876485805, 750819978}},
		{100, []uint32{877718945, 1352146842, 2284573589, 3816131989, 2371920396}},
	}
	for _, tt := range tests {
		m := NewMulberry32(tt.seed)
		for i, want := range tt.want {
			if got := m.Uint32(); got != want {
				t.Errorf("seed %d draw %d: got %d, want %d", tt.seed, i, got, want)
			}
		}
	}
}

func sampleMedian(t *testing.T, d Distribution, n int, seed uint32) time.Duration {
	t.Helper()
	src := NewMulberry32(seed)
	xs := make([]time.Duration, n)
	for i := range xs {
		xs[i] = d.Sample(src)
		if xs[i] < 0 {
			t.Fatalf("negative sample %v", xs[i])
		}
	}
	slices.Sort(xs)
	return xs[n/2]
}

// normalQuantile is the standard normal quantile function.
func normalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

func TestMediansWithinFivePercent(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		spec Spec
		// want is the theoretical median.
		want time.Duration
	}{
		{"fixed", Spec{Kind: "fixed", Value: 30 * ms}, 30 * ms},
		{"uniform", Spec{Kind: "uniform", Min: 80 * ms, Max: 240 * ms}, 160 * ms},
		{"uniform whole ms", Spec{Kind: "uniform", Min: 80 * ms, Max: 240 * ms, Resolution: ms}, 160 * ms},
		{"lognormal", Spec{Kind: "lognormal", Median: 120 * ms, Spread: 0.3}, 120 * ms},
		{"lognormal wide", Spec{Kind: "lognormal", Median: 1200 * ms, Spread: 1}, 1200 * ms},
		{
			// 5% hang at 8 s: the median is the base's 0.5/0.95 quantile.
			"lognormal with hang",
			Spec{Kind: "lognormal", Median: 1200 * ms, Spread: 0.3, HangProbability: 0.05, HangDuration: 8 * time.Second},
			time.Duration(1200 * float64(ms) * math.Exp(0.3*normalQuantile(0.5/0.95))),
		},
		{
			// 75% below 240 ms: the median is the 0.5/0.75 quantile of 80–240.
			"concurrency simulation mixture", ConcurrencySimulation(),
			80*ms + time.Duration(float64(160*ms)*(0.5/0.75)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			got := sampleMedian(t, d, 20001, 7)
			if rel := math.Abs(float64(got-tt.want)) / float64(tt.want); rel > 0.05 {
				t.Errorf("median %v, want %v within 5%% (off by %.1f%%)", got, tt.want, rel*100)
			}
		})
	}
}

func TestMixtureShares(t *testing.T) {
	d, err := ConcurrencySimulation().Build()
	if err != nil {
		t.Fatal(err)
	}
	src := NewMulberry32(3)
	var common, slower, tail int
	const n = 40000
	for range n {
		x := d.Sample(src)
		ms := x / time.Millisecond
		switch {
		case x%time.Millisecond != 0:
			t.Fatalf("%v is not whole milliseconds", x)
		case ms >= 80 && ms <= 240:
			common++
		case ms >= 241 && ms <= 500:
			slower++
		case ms >= 800 && ms <= 1200:
			tail++
		default:
			t.Fatalf("%v outside every component", x)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"common", float64(common) / n, 0.75}, {"slower", float64(slower) / n, 0.20}, {"tail", float64(tail) / n, 0.05}} {
		if math.Abs(c.got-c.want) > 0.01 {
			t.Errorf("%s share %.3f, want %.2f ± 0.01", c.name, c.got, c.want)
		}
	}
}

func TestUniformResolutionReachesBothEnds(t *testing.T) {
	d := Uniform{Min: 2 * time.Millisecond, Max: 4 * time.Millisecond, Resolution: time.Millisecond}
	src := NewMulberry32(9)
	seen := map[time.Duration]int{}
	for range 3000 {
		seen[d.Sample(src)]++
	}
	if len(seen) != 3 || seen[2*time.Millisecond] == 0 || seen[4*time.Millisecond] == 0 {
		t.Errorf("values seen %v, want exactly 2ms, 3ms, 4ms", seen)
	}
}

// fixedSource returns u for every draw.
type fixedSource float64

func (f fixedSource) Float64() float64 { return float64(f) }

func TestHangConsumesOneDecision(t *testing.T) {
	h := Hang{P: 0.05, Duration: 8 * time.Second, Base: Fixed{time.Second}}
	if got := h.Sample(fixedSource(0.04)); got != 8*time.Second {
		t.Errorf("u=0.04: got %v, want the hang", got)
	}
	if got := h.Sample(fixedSource(0.05)); got != time.Second {
		t.Errorf("u=0.05: got %v, want the base", got)
	}
}

func TestBuildErrorsNameTheField(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no kind", Spec{}, "kind: missing"},
		{"bad kind", Spec{Kind: "gamma"}, `kind: "gamma" is not one of`},
		{"negative fixed", Spec{Kind: "fixed", Value: -ms}, "value:"},
		{"inverted uniform", Spec{Kind: "uniform", Min: 5 * ms, Max: ms}, "max:"},
		{"resolution not dividing", Spec{Kind: "uniform", Min: 0, Max: 10 * ms, Resolution: 3 * ms}, "resolution:"},
		{"zero median", Spec{Kind: "lognormal"}, "median:"},
		{"negative spread", Spec{Kind: "lognormal", Median: ms, Spread: -1}, "spread:"},
		{"empty mixture", Spec{Kind: "mixture"}, "components:"},
		{"zero weight", Spec{Kind: "mixture", Components: []Component{{Weight: 0, Spec: Spec{Kind: "fixed"}}}}, "components[0].weight:"},
		{"bad component", Spec{Kind: "mixture", Components: []Component{{Weight: 1, Spec: Spec{Kind: "lognormal"}}}}, "components[0].median:"},
		{"hang above 1", Spec{Kind: "fixed", HangProbability: 1.5, HangDuration: ms}, "hang_probability:"},
		{"hang without duration", Spec{Kind: "fixed", HangProbability: 0.1}, "hang_duration:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.spec.Build()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	d, err := Spec{Kind: "lognormal", Median: time.Second, Spread: 0.5, HangProbability: 0.1, HangDuration: 3 * time.Second}.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, b := NewMulberry32(11), NewMulberry32(11)
	for i := range 100 {
		if x, y := d.Sample(a), d.Sample(b); x != y {
			t.Fatalf("draw %d: %v != %v", i, x, y)
		}
	}
}

func TestLongest(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		spec Spec
		want time.Duration
	}{
		{Spec{Kind: "fixed", Value: 30 * ms}, 30 * ms},
		{Spec{Kind: "uniform", Min: ms, Max: 9 * ms}, 9 * ms},
		{Spec{Kind: "lognormal", Median: 100 * ms, Spread: 0}, 100 * ms},
		{Spec{Kind: "fixed", Value: 30 * ms, HangProbability: 0.1, HangDuration: 8 * time.Second}, 8 * time.Second},
		{Spec{Kind: "mixture", Components: []Component{
			{Weight: 1, Spec: Spec{Kind: "fixed", Value: 5 * ms}},
			{Weight: 1, Spec: Spec{Kind: "uniform", Min: ms, Max: 70 * ms}}}}, 70 * ms},
	} {
		if got := c.spec.Longest(); got != c.want {
			t.Errorf("%+v: longest %v, want %v", c.spec, got, c.want)
		}
	}
	// A log-normal's is its 99.9th percentile: 0.1% of draws exceed it.
	ln := Spec{Kind: "lognormal", Median: 10 * ms, Spread: 0.3}
	d, _ := ln.Build()
	src := NewMulberry32(1)
	over := 0
	for range 100_000 {
		if d.Sample(src) > ln.Longest() {
			over++
		}
	}
	if over < 50 || over > 150 {
		t.Errorf("%d of 100 000 log-normal draws over its longest, want about 100", over)
	}
}
