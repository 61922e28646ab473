package latency

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Distribution draws service times. Sample consumes a fixed, documented
// number of values from src per call, so a seeded sequence is reproducible.
type Distribution interface {
	Sample(src Source) time.Duration
}

// Fixed always returns D and consumes nothing from the source.
type Fixed struct{ D time.Duration }

// Sample returns f.D.
func (f Fixed) Sample(Source) time.Duration { return f.D }

// Uniform draws from [Min, Max]. With Resolution 0 the draw is continuous
// (Max itself has probability zero); with Resolution r > 0 it is one of the
// equally likely values Min, Min+r, ..., Max, which is how "80 through 240
// milliseconds" is read: min + floor(u * ((max-min)/r + 1)) * r. One value
// is consumed per sample.
type Uniform struct {
	Min, Max   time.Duration
	Resolution time.Duration
}

// Sample draws one value.
func (u Uniform) Sample(src Source) time.Duration {
	x := src.Float64()
	if u.Resolution <= 0 {
		return u.Min + time.Duration(x*float64(u.Max-u.Min))
	}
	steps := int64((u.Max-u.Min)/u.Resolution) + 1
	return u.Min + time.Duration(int64(x*float64(steps)))*u.Resolution
}

// LogNormal draws Median * exp(Spread * Z) with Z standard normal (Box–Muller
// on two source values), so Median is the distribution's median and Spread
// the standard deviation of its logarithm. Spread 0 returns Median and
// consumes nothing.
type LogNormal struct {
	Median time.Duration
	Spread float64
}

// Sample draws one value, consuming two source values when Spread > 0.
func (l LogNormal) Sample(src Source) time.Duration {
	if l.Spread == 0 {
		return l.Median
	}
	u1, u2 := src.Float64(), src.Float64()
	z := math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
	return time.Duration(float64(l.Median) * math.Exp(l.Spread*z))
}

// Weighted is one component of a Mixture.
type Weighted struct {
	Weight float64
	Dist   Distribution
}

// Mixture picks a component with probability proportional to its weight
// (one source value, compared with the cumulative weights in order), then
// samples that component.
type Mixture []Weighted

// Sample draws one value.
func (m Mixture) Sample(src Source) time.Duration {
	total := 0.0
	for _, c := range m {
		total += c.Weight
	}
	// Comparing u with cum/total (not u*total with cum) makes weights
	// 75, 20, 5 behave exactly like the thresholds 0.75 and 0.95.
	u := src.Float64()
	cum := 0.0
	for _, c := range m {
		cum += c.Weight
		if u < cum/total {
			return c.Dist.Sample(src)
		}
	}
	return m[len(m)-1].Dist.Sample(src)
}

// Hang returns Duration with probability P, otherwise a sample of Base. One
// source value decides; Base is sampled only when the call does not hang.
type Hang struct {
	P        float64
	Duration time.Duration
	Base     Distribution
}

// Sample draws one value.
func (h Hang) Sample(src Source) time.Duration {
	if src.Float64() < h.P {
		return h.Duration
	}
	return h.Base.Sample(src)
}

// Quantile is one point of an empirical distribution: the share Q of
// service times at or below Value.
type Quantile struct {
	Q     float64       `yaml:"q" json:"q"`
	Value time.Duration `yaml:"value" json:"value"`
}

// Empirical is the inverse CDF that runs piecewise linearly through measured
// quantiles: a draw u in [0, 1) falls between the two points whose Q
// bracket it and takes the value interpolated linearly between theirs
// (to the nearest nanosecond). The
// points are sorted by Q, the first at 0 and the last at 1 (Spec.Build
// checks), so every draw lies between the first value and the last. One
// value is consumed per sample.
type Empirical []Quantile

// Sample draws one value.
func (e Empirical) Sample(src Source) time.Duration {
	u := src.Float64()
	// The first point above u; e[0].Q = 0 ≤ u < 1 = e[len-1].Q, so it is
	// one of e[1:].
	i := sort.Search(len(e), func(i int) bool { return e[i].Q > u })
	i = min(max(i, 1), len(e)-1)
	lo, hi := e[i-1], e[i]
	frac := (u - lo.Q) / (hi.Q - lo.Q)
	return lo.Value + time.Duration(math.Round(frac*float64(hi.Value-lo.Value)))
}

// Spec is the configuration form of a Distribution, as written in YAML or
// JSON. Kind selects which fields apply; Build validates them.
type Spec struct {
	Kind       Kind          `yaml:"kind" json:"kind"`
	Value      time.Duration `yaml:"value,omitempty" json:"value,omitempty"`
	Min        time.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max        time.Duration `yaml:"max,omitempty" json:"max,omitempty"`
	Resolution time.Duration `yaml:"resolution,omitempty" json:"resolution,omitempty"`
	Median     time.Duration `yaml:"median,omitempty" json:"median,omitempty"`
	Spread     float64       `yaml:"spread,omitempty" json:"spread,omitempty"`
	Components []Component   `yaml:"components,omitempty" json:"components,omitempty"`
	// Quantiles are an empirical distribution's points, Q from 0 to 1.
	Quantiles []Quantile `yaml:"quantiles,omitempty" json:"quantiles,omitempty"`
	// HangProbability and HangDuration wrap any kind in a Hang.
	HangProbability float64       `yaml:"hang_probability,omitempty" json:"hang_probability,omitempty"`
	HangDuration    time.Duration `yaml:"hang_duration,omitempty" json:"hang_duration,omitempty"`
}

// Component is one weighted part of a mixture Spec.
type Component struct {
	Weight float64 `yaml:"weight" json:"weight"`
	Spec   `yaml:",inline" json:",inline"`
}

// Kind is a service-time distribution's family.
type Kind string

// Kinds of distribution.
const (
	KindFixed     Kind = "fixed"
	KindUniform   Kind = "uniform"
	KindLogNormal Kind = "lognormal"
	KindMixture   Kind = "mixture"
	KindEmpirical Kind = "empirical"
)

// Kinds lists the valid values of Spec.Kind.
var Kinds = []Kind{KindFixed, KindUniform, KindLogNormal, KindMixture, KindEmpirical}

// kindNames is Kinds for messages.
func kindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Build validates s and returns its Distribution. Errors name the offending
// field relative to s (prefix them with where s came from).
func (s Spec) Build() (Distribution, error) {
	d, err := s.buildBase()
	if err != nil {
		return nil, err
	}
	if s.HangProbability < 0 || s.HangProbability > 1 || math.IsNaN(s.HangProbability) {
		return nil, fmt.Errorf("hang_probability: %v is not in [0, 1]", s.HangProbability)
	}
	if s.HangDuration < 0 {
		return nil, fmt.Errorf("hang_duration: %v is negative", s.HangDuration)
	}
	if s.HangProbability > 0 {
		if s.HangDuration == 0 {
			return nil, errors.New("hang_duration: must be > 0 when hang_probability is set")
		}
		d = Hang{P: s.HangProbability, Duration: s.HangDuration, Base: d}
	}
	return d, nil
}

func (s Spec) buildBase() (Distribution, error) {
	switch s.Kind {
	case KindFixed:
		if s.Value < 0 {
			return nil, fmt.Errorf("value: %v is negative", s.Value)
		}
		return Fixed{s.Value}, nil
	case KindUniform:
		if s.Min < 0 {
			return nil, fmt.Errorf("min: %v is negative", s.Min)
		}
		if s.Max < s.Min {
			return nil, fmt.Errorf("max: %v is below min %v", s.Max, s.Min)
		}
		if s.Resolution < 0 {
			return nil, fmt.Errorf("resolution: %v is negative", s.Resolution)
		}
		if s.Resolution > 0 && (s.Max-s.Min)%s.Resolution != 0 {
			return nil, fmt.Errorf("resolution: %v does not divide max-min %v", s.Resolution, s.Max-s.Min)
		}
		return Uniform{Min: s.Min, Max: s.Max, Resolution: s.Resolution}, nil
	case KindLogNormal:
		if s.Median <= 0 {
			return nil, fmt.Errorf("median: %v must be > 0", s.Median)
		}
		if s.Spread < 0 || s.Spread > 5 || math.IsNaN(s.Spread) {
			return nil, fmt.Errorf("spread: %v is not in [0, 5]", s.Spread)
		}
		return LogNormal{Median: s.Median, Spread: s.Spread}, nil
	case KindMixture:
		if len(s.Components) == 0 {
			return nil, errors.New("components: a mixture needs at least one")
		}
		m := make(Mixture, 0, len(s.Components))
		for i, c := range s.Components {
			if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
				return nil, fmt.Errorf("components[%d].weight: %v must be > 0", i, c.Weight)
			}
			d, err := c.Spec.Build()
			if err != nil {
				return nil, fmt.Errorf("components[%d].%w", i, err)
			}
			m = append(m, Weighted{Weight: c.Weight, Dist: d})
		}
		return m, nil
	case KindEmpirical:
		return buildEmpirical(s.Quantiles)
	case "":
		return nil, fmt.Errorf("kind: missing (one of %s)", kindNames())
	default:
		return nil, fmt.Errorf("kind: %q is not one of %s", s.Kind, kindNames())
	}
}

// buildEmpirical checks an empirical distribution's points: at least two,
// Q strictly increasing from exactly 0 to exactly 1, values non-decreasing
// from ≥ 0.
func buildEmpirical(qs []Quantile) (Distribution, error) {
	if len(qs) < 2 {
		return nil, fmt.Errorf("quantiles: %d points; an empirical distribution needs at least 2 (q 0 and q 1)", len(qs))
	}
	for i, p := range qs {
		switch {
		case !(p.Q >= 0 && p.Q <= 1):
			return nil, fmt.Errorf("quantiles[%d].q: %v is not in [0, 1]", i, p.Q)
		case i == 0 && p.Q != 0:
			return nil, fmt.Errorf("quantiles[0].q: %v must be 0 (the first point is the minimum)", p.Q)
		case i == len(qs)-1 && p.Q != 1:
			return nil, fmt.Errorf("quantiles[%d].q: %v must be 1 (the last point is the maximum)", i, p.Q)
		case i > 0 && p.Q <= qs[i-1].Q:
			return nil, fmt.Errorf("quantiles[%d].q: %v must be above quantiles[%d].q %v", i, p.Q, i-1, qs[i-1].Q)
		case p.Value < 0:
			return nil, fmt.Errorf("quantiles[%d].value: %v is negative", i, p.Value)
		case i > 0 && p.Value < qs[i-1].Value:
			return nil, fmt.Errorf("quantiles[%d].value: %v is below quantiles[%d].value %v", i, p.Value, i-1, qs[i-1].Value)
		}
	}
	return Empirical(slices.Clone(qs)), nil
}

// ConcurrencySimulation is the seeded duration distribution of the published
// concurrency simulation: 75% from 80 through 240 ms, 20% from 241 through
// 500 ms, 5% from 800 through 1200 ms, whole milliseconds.
func ConcurrencySimulation() Spec {
	ms := time.Millisecond
	comp := func(w float64, lo, hi time.Duration) Component {
		return Component{Weight: w, Spec: Spec{Kind: KindUniform, Min: lo, Max: hi, Resolution: ms}}
	}
	return Spec{Kind: KindMixture, Components: []Component{
		comp(75, 80*ms, 240*ms),
		comp(20, 241*ms, 500*ms),
		comp(5, 800*ms, 1200*ms),
	}}
}

// Longest is the longest service time s configures: a fixed value, a
// uniform maximum, an empirical distribution's last value, a hang, or for a log-normal (which has no maximum) its
// 99.9th percentile, median × e^(3.09 × spread). The experiment runner waits
// a multiple of it for a mock service to go quiet.
func (s Spec) Longest() time.Duration {
	var d time.Duration
	switch s.Kind {
	case KindFixed:
		d = s.Value
	case KindUniform:
		d = s.Max
	case KindLogNormal:
		d = time.Duration(float64(s.Median) * math.Exp(3.09*s.Spread))
	case KindMixture:
		for _, c := range s.Components {
			d = max(d, c.Spec.Longest())
		}
	case KindEmpirical:
		if len(s.Quantiles) > 0 {
			d = s.Quantiles[len(s.Quantiles)-1].Value
		}
	}
	if s.HangProbability > 0 {
		d = max(d, s.HangDuration)
	}
	return d
}

// Scaled is s with every time it draws multiplied by f (> 0): its values,
// bounds, medians, quantiles and hang, and its components'. The
// resolution of a uniform one is kept.
func (s Spec) Scaled(f float64) Spec {
	mul := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	s.Value, s.Min, s.Max, s.Median, s.HangDuration = mul(s.Value), mul(s.Min), mul(s.Max), mul(s.Median), mul(s.HangDuration)
	if s.Quantiles != nil {
		qs := make([]Quantile, len(s.Quantiles))
		for i, q := range s.Quantiles {
			qs[i] = Quantile{Q: q.Q, Value: mul(q.Value)}
		}
		s.Quantiles = qs
	}
	if s.Components != nil {
		cs := make([]Component, len(s.Components))
		for i, c := range s.Components {
			cs[i] = Component{Weight: c.Weight, Spec: c.Spec.Scaled(f)}
		}
		s.Components = cs
	}
	return s
}
