package models

import (
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/mockservice/latency"
)

// ParseSeeds reads "1-100" or a single "7": a ConcurrencyScenario's
// SeedFrom and SeedTo (a bad one is a *FieldError of seed_from).
func ParseSeeds(s string) (from, to uint32, err error) {
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 32)
	b, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fieldErrorf("seed_from", "%q is not FROM-TO with whole numbers", s)
	}
	if b < a {
		return 0, 0, fieldErrorf("seed_from", "%q ends before it starts", s)
	}
	return uint32(a), uint32(b), nil
}

// ParseLimits reads a comma-separated list of client limits, "1,4,8,48"
// (a bad one is a *FieldError of limits).
func ParseLimits(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fieldErrorf("limits", "%q is not a whole number ≥ 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseMixtureMs reads a mixture of whole-millisecond uniform ranges as
// "WEIGHT:LO-HI,...", e.g. "75:80-240,20:241-500,5:800-1200" (a bad one
// is a *FieldError of durations).
func ParseMixtureMs(s string) (latency.Spec, error) {
	spec := latency.Spec{Kind: latency.KindMixture}
	for _, part := range strings.Split(s, ",") {
		w, rangeMs, ok := strings.Cut(strings.TrimSpace(part), ":")
		lo, hi, ok2 := strings.Cut(rangeMs, "-")
		weight, err1 := strconv.ParseFloat(w, 64)
		a, err2 := strconv.Atoi(lo)
		b, err3 := strconv.Atoi(hi)
		if !ok || !ok2 || err1 != nil || err2 != nil || err3 != nil {
			return spec, fieldErrorf("durations", "%q is not WEIGHT:LO-HI in milliseconds", part)
		}
		spec.Components = append(spec.Components, latency.Component{Weight: weight, Spec: latency.Spec{
			Kind: latency.KindUniform, Min: time.Duration(a) * time.Millisecond, Max: time.Duration(b) * time.Millisecond,
			Resolution: time.Millisecond}})
	}
	if _, err := spec.Build(); err != nil {
		return spec, &FieldError{Field: "durations", Err: err}
	}
	return spec, nil
}
