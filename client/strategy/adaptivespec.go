package strategy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/budgets"
)

// AdaptiveUsage says how ParseAdaptive's text is written (loadlab run
// --adaptive).
const AdaptiveUsage = "dep=SPEC,...: an adaptive concurrency limit in place of the dependency's permits (dep=off removes one):\n" +
	"  [aimd:]FLOOR:INITIAL:CEILING[:BACKOFF]  loss-based: +1 per success while the limit is in use, ×BACKOFF\n" +
	"      (default 0.9, in (0, 1)) on a 503/429 or call timeout, within [FLOOR, CEILING]; e.g. records=1:6:12\n" +
	"  vegas:FLOOR:INITIAL:CEILING[:ALPHA:BETA:THRESHOLD[:WINDOW[:PROBE]]]  latency-based (Netflix Vegas): per\n" +
	"      window of WINDOW calls, queue = ⌈limit × (1 − no-load RTT ÷ RTT)⌉ (RTT: request written to first\n" +
	"      byte); grow below ALPHA queued calls, shrink above BETA, −1 on a drop (defaults 2:2:0:10:30)\n" +
	"C5-aimd is C4 with enrichment=1:24:64,records=1:6:12; C5-vegas uses vegas: (enrichment 3:6:1:50:30)"

// ParseAdaptive reads dep=SPEC pairs (AdaptiveUsage) into adaptive limits
// by dependency, as Overrides.Adaptive takes them: dep=off is a nil limit,
// which removes one. The limits are validated where they are applied
// (Strategy.With).
func ParseAdaptive(text string) (map[string]*AdaptiveLimit, error) {
	out := map[string]*AdaptiveLimit{}
	for _, kv := range strings.Split(text, ",") {
		dep, spec, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || dep == "" {
			return nil, fmt.Errorf("%q is not dep=[aimd:|vegas:]FLOOR:INITIAL:CEILING[:...]", kv)
		}
		if spec == "off" {
			out[dep] = nil
			continue
		}
		a, err := parseAdaptiveSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", dep, err)
		}
		out[dep] = &a
	}
	return out, nil
}

// parseAdaptiveSpec reads one SPEC of AdaptiveUsage.
func parseAdaptiveSpec(spec string) (AdaptiveLimit, error) {
	alg, rest := AlgAIMD, spec
	if a, r, ok := strings.Cut(spec, ":"); ok && (AdaptiveAlg(a) == AlgAIMD || AdaptiveAlg(a) == AlgVegas) {
		alg, rest = AdaptiveAlg(a), r
	}
	parts := strings.Split(rest, ":")
	atoi := func(i int, name string, dst *int) error {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number", name, parts[i])
		}
		*dst = n
		return nil
	}
	var floor, initial, ceiling int
	if len(parts) < 3 {
		return AdaptiveLimit{}, fmt.Errorf("%s: give FLOOR:INITIAL:CEILING", alg)
	}
	if err := errors.Join(atoi(0, "floor", &floor), atoi(1, "initial", &initial), atoi(2, "ceiling", &ceiling)); err != nil {
		return AdaptiveLimit{}, fmt.Errorf("%s.%w", alg, err)
	}
	if alg == AlgAIMD {
		a := budgets.AIMD{Floor: floor, Initial: initial, Ceiling: ceiling, Backoff: budgets.DefaultAIMDBackoff}
		switch len(parts) {
		case 3:
		case 4:
			b, err := strconv.ParseFloat(parts[3], 64)
			if err != nil {
				return AdaptiveLimit{}, fmt.Errorf("aimd.backoff: %q is not a number", parts[3])
			}
			a.Backoff = b
		default:
			return AdaptiveLimit{}, errors.New("aimd: give FLOOR:INITIAL:CEILING[:BACKOFF]")
		}
		return AdaptiveLimit{AIMD: &a}, nil
	}
	v := LabVegas(initial, floor, ceiling)
	switch len(parts) {
	case 3, 6, 7, 8:
	default:
		return AdaptiveLimit{}, errors.New("vegas: give FLOOR:INITIAL:CEILING[:ALPHA:BETA:THRESHOLD[:WINDOW[:PROBE]]]")
	}
	for i, f := range []struct {
		name string
		dst  *int
	}{{"alpha", &v.Alpha}, {"beta", &v.Beta}, {"threshold", &v.Threshold}, {"window", &v.Window}, {"probe", &v.Probe}} {
		if 3+i < len(parts) {
			if err := atoi(3+i, f.name, f.dst); err != nil {
				return AdaptiveLimit{}, fmt.Errorf("vegas.%w", err)
			}
		}
	}
	return AdaptiveLimit{Vegas: v}, nil
}
