package latency

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// measured is a latency profile as a probe reports it: quantiles of a
// real dependency, with a long tail.
func measured() []Quantile {
	ms := time.Millisecond
	return []Quantile{{0, 8 * ms}, {0.5, 40 * ms}, {0.9, 120 * ms}, {0.99, 400 * ms}, {1, 450 * ms}}
}

// interpolate is the points' piecewise linear inverse CDF at q.
func interpolate(qs []Quantile, q float64) time.Duration {
	for i := 1; i < len(qs); i++ {
		if q <= qs[i].Q {
			f := (q - qs[i-1].Q) / (qs[i].Q - qs[i-1].Q)
			return qs[i-1].Value + time.Duration(f*float64(qs[i].Value-qs[i-1].Value))
		}
	}
	return qs[len(qs)-1].Value
}

// 100,000 seeded draws have the measured quantiles, and those between
// them on the lines between the points, and never leave the first and last
// values. A sample's q-quantile is off the distribution's by the sampling
// error of q, σ = √(q(1−q)/n), times the line's slope there: at a point
// where the line turns steep (p90 here: 3 s per unit of q above it, 0.2 s
// below) one σ is 2.5% of the value, so the check is that the sample's
// quantile lies on the line within 4σ of q, and that the share of draws at
// or below each point's value is its q within half a percentage point (16σ
// at p50), for several seeds.
func TestEmpiricalDrawsHaveTheMeasuredQuantiles(t *testing.T) {
	qs := measured()
	d, err := Spec{Kind: KindEmpirical, Quantiles: qs}.Build()
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	for seed := uint32(1); seed <= 5; seed++ {
		src := NewMulberry32(seed)
		xs := make([]time.Duration, n)
		for i := range xs {
			xs[i] = d.Sample(src)
		}
		slices.Sort(xs)
		if xs[0] < qs[0].Value || xs[n-1] > qs[len(qs)-1].Value {
			t.Errorf("seed %d: draws from %v to %v, want within [%v, %v]", seed, xs[0], xs[n-1], qs[0].Value, qs[len(qs)-1].Value)
		}
		for _, q := range []float64{0.25, 0.5, 0.75, 0.9, 0.95, 0.99} {
			got := xs[int(q*n)]
			sigma := math.Sqrt(q * (1 - q) / n)
			lo, hi := interpolate(qs, q-4*sigma), interpolate(qs, min(q+4*sigma, 1))
			if got < lo || got > hi {
				t.Errorf("seed %d: p%g %v, want %v (within 4σ of q: %v to %v)", seed, 100*q, got, interpolate(qs, q), lo, hi)
			}
		}
		for _, p := range qs[1 : len(qs)-1] {
			share := float64(sort.Search(n, func(i int) bool { return xs[i] > p.Value })) / n
			if math.Abs(share-p.Q) > 0.005 {
				t.Errorf("seed %d: %.4f of the draws at or below %v, want %v ± 0.005", seed, share, p.Value, p.Q)
			}
		}
	}
}

// A draw is one source value, mapped through the points: u on a point
// gives its value, u between two points the value on the line between.
func TestEmpiricalInterpolatesOneValue(t *testing.T) {
	qs := measured()
	d := Empirical(qs)
	for _, c := range []struct {
		u    float64
		want time.Duration
	}{{0, 8 * time.Millisecond}, {0.25, 24 * time.Millisecond}, {0.5, 40 * time.Millisecond}, {0.7, 80 * time.Millisecond}, {0.995, 425 * time.Millisecond}} {
		src := &countedSource{u: c.u}
		if got := d.Sample(src); got != c.want || src.n != 1 {
			t.Errorf("u=%v: %v after %d values, want %v after one", c.u, got, src.n, c.want)
		}
	}
	// A step (two points of one value) and a flat stretch are allowed.
	flat := Empirical{{0, 5 * time.Millisecond}, {0.5, 5 * time.Millisecond}, {1, 9 * time.Millisecond}}
	if got := flat.Sample(&countedSource{u: 0.3}); got != 5*time.Millisecond {
		t.Errorf("flat stretch: %v, want 5ms", got)
	}
}

type countedSource struct {
	u float64
	n int
}

func (f *countedSource) Float64() float64 { f.n++; return f.u }

func TestEmpiricalValidationNamesThePoint(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		qs   []Quantile
		want string
	}{
		{nil, "quantiles: 0 points"},
		{[]Quantile{{0, ms}}, "quantiles: 1 points"},
		{[]Quantile{{0.1, ms}, {1, 2 * ms}}, "quantiles[0].q: 0.1 must be 0"},
		{[]Quantile{{0, ms}, {0.9, 2 * ms}}, "quantiles[1].q: 0.9 must be 1"},
		{[]Quantile{{0, ms}, {0.5, 2 * ms}, {0.5, 3 * ms}, {1, 4 * ms}}, "quantiles[2].q: 0.5 must be above quantiles[1].q 0.5"},
		{[]Quantile{{0, ms}, {0.6, 2 * ms}, {0.4, 3 * ms}, {1, 4 * ms}}, "quantiles[2].q: 0.4 must be above"},
		{[]Quantile{{0, ms}, {math.NaN(), 2 * ms}, {1, 4 * ms}}, "quantiles[1].q: NaN is not in [0, 1]"},
		{[]Quantile{{0, ms}, {1.5, 2 * ms}}, "quantiles[1].q: 1.5 is not in [0, 1]"},
		{[]Quantile{{0, -ms}, {1, 2 * ms}}, "quantiles[0].value: -1ms is negative"},
		{[]Quantile{{0, ms}, {0.5, 5 * ms}, {1, 4 * ms}}, "quantiles[2].value: 4ms is below quantiles[1].value 5ms"},
	} {
		_, err := Spec{Kind: KindEmpirical, Quantiles: c.qs}.Build()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error starting %q", c.qs, err, c.want)
		}
	}
	// Building copies the points: changing the spec's slice later changes
	// nothing drawn.
	qs := measured()
	d, err := Spec{Kind: KindEmpirical, Quantiles: qs}.Build()
	if err != nil {
		t.Fatal(err)
	}
	qs[len(qs)-1].Value = time.Hour
	if got := d.Sample(&countedSource{u: 0.9999999}); got > 450*ms {
		t.Errorf("after the spec changed: %v, want the built points' at most 450ms", got)
	}
}

// The kind is listed, its longest is its last value, and it reads from
// YAML with durations as text and from JSON with durations in nanoseconds.
func TestEmpiricalSpecReadsAndLongest(t *testing.T) {
	if !slices.Contains(Kinds, KindEmpirical) {
		t.Errorf("Kinds %v lack %s", Kinds, KindEmpirical)
	}
	var fromYAML, fromJSON Spec
	if err := yaml.Unmarshal([]byte("kind: empirical\nquantiles: [{q: 0, value: 8ms}, {q: 0.5, value: 40ms}, {q: 0.9, value: 120ms}, {q: 0.99, value: 400ms}, {q: 1, value: 450ms}]\n"), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"kind": "empirical", "quantiles": [{"q": 0, "value": 8000000}, {"q": 0.5, "value": 40000000},
		{"q": 0.9, "value": 120000000}, {"q": 0.99, "value": 400000000}, {"q": 1, "value": 450000000}]}`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	want := Spec{Kind: KindEmpirical, Quantiles: measured()}
	for name, got := range map[string]Spec{"yaml": fromYAML, "json": fromJSON} {
		if !slices.Equal(got.Quantiles, want.Quantiles) || got.Kind != want.Kind {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if got := want.Longest(); got != 450*time.Millisecond {
		t.Errorf("longest %v, want the last value 450ms", got)
	}
	hung := want
	hung.HangProbability, hung.HangDuration = 0.01, 3*time.Second
	if got := hung.Longest(); got != 3*time.Second {
		t.Errorf("with a hang: longest %v, want 3s", got)
	}
}
