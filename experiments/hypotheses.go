package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Operators of a hypothesis.
var Operators = []string{"==", "!=", "<", "<=", ">", ">=", "between"}

// Metrics every run records; hypotheses may name any of them.
var Metrics = []string{
	"accepted_per_second", "duration_seconds", "write_rejections", "peak_concurrent_writes",
	"peak_in_flight_enrichment", "peak_in_flight_records", "incomplete", "incomplete_fraction",
	"complete", "write_rejected", "failed", "write_unknown", "permit_timeouts", "rate_timeouts", "call_timeouts", "errors",
	"gomaxprocs", "num_cpu", "cpu_quota", "records_in_flight", "peak_records_in_flight", "stored_writes",
	"acknowledged_writes_lost",
	// Retries (C6, C2-retries; every run since issue 17): requests the
	// server saw per first attempt, retries made and denied by the budget.
	"records_amplification", "enrichment_amplification", "records_retries", "enrichment_retries",
	"records_retries_denied", "enrichment_retries_denied",
	// Adaptive limits (C5): lowest, median and last sampled value.
	"records_limit_min", "records_limit_median", "records_limit_last",
	"enrichment_limit_min", "enrichment_limit_median", "enrichment_limit_last",
}

// PhaseMetrics are the metrics each phase of a phased run records; a
// hypothesis names the phase with `phase:`. Rates are per lab second,
// latencies in lab milliseconds; peak_writes_in_flight is counted at the
// client (the server's high-water mark is the whole run's).
var PhaseMetrics = []string{
	"accepted", "accepted_per_second", "write_rejections", "peak_writes_in_flight", "ended",
	"record_latency_p50_ms", "record_latency_p95_ms", "record_latency_p99_ms",
	"complete", "incomplete", "write_rejected", "failed", "write_unknown",
	"records_limit_min", "records_limit_median", "records_limit_last",
	"enrichment_limit_min", "enrichment_limit_median", "enrichment_limit_last",
}

// MetricKey is the name of the hypothesis's metric among a run's metrics:
// "phase/metric" for a phase's.
func (h Hypothesis) MetricKey() string { return phaseKey(h.Phase, h.Metric) }

// MinusKey is MetricKey for the subtracted metric ("" when none).
func (h Hypothesis) MinusKey() string {
	if h.Minus == "" {
		return ""
	}
	return phaseKey(h.Phase, h.Minus)
}

func phaseKey(phase, metric string) string {
	if phase == "" {
		return metric
	}
	return phase + "/" + metric
}

// Threshold is a number, or [lo, hi] for "between".
type Threshold struct {
	Value  float64
	Lo, Hi float64
	Range  bool
}

// UnmarshalYAML reads a number or a two-number list.
func (t *Threshold) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var r []float64
		if err := n.Decode(&r); err != nil || len(r) != 2 {
			return fmt.Errorf("line %d: threshold must be a number or [lo, hi]", n.Line)
		}
		*t = Threshold{Lo: r[0], Hi: r[1], Range: true}
		return nil
	}
	return n.Decode(&t.Value)
}

// MarshalJSON writes the number or the pair.
func (t Threshold) MarshalJSON() ([]byte, error) {
	if t.Range {
		return json.Marshal([]float64{t.Lo, t.Hi})
	}
	return json.Marshal(t.Value)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Threshold) UnmarshalJSON(b []byte) error {
	var r []float64
	if json.Unmarshal(b, &r) == nil && len(r) == 2 {
		*t = Threshold{Lo: r[0], Hi: r[1], Range: true}
		return nil
	}
	*t = Threshold{}
	return json.Unmarshal(b, &t.Value)
}

func (t Threshold) String() string {
	if t.Range {
		return fmt.Sprintf("[%g, %g]", t.Lo, t.Hi)
	}
	return fmt.Sprintf("%g", t.Value)
}

// Hypothesis is one preregistered claim.
type Hypothesis struct {
	ID      string `yaml:"id" json:"id"`
	Claim   string `yaml:"claim" json:"claim"`
	Source  string `yaml:"source" json:"source"`
	Metric  string `yaml:"metric" json:"metric"`
	Minus   string `yaml:"minus,omitempty" json:"minus,omitempty"`
	Cell    *Cell  `yaml:"cell,omitempty" json:"cell,omitempty"`
	Cells   []Cell `yaml:"cells,omitempty" json:"cells,omitempty"`
	Versus  *Cell  `yaml:"versus,omitempty" json:"versus,omitempty"`
	Compare string `yaml:"compare,omitempty" json:"compare,omitempty"`
	// Phase, when set, judges the metric of that phase of a phased
	// scenario (one of PhaseMetrics) instead of the whole run's.
	Phase             string    `yaml:"phase,omitempty" json:"phase,omitempty"`
	RequiresMechanism string    `yaml:"requires_mechanism,omitempty" json:"requires_mechanism,omitempty"`
	Op                string    `yaml:"op" json:"op"`
	Threshold         Threshold `yaml:"threshold" json:"threshold"`
	// Rules are the judging rules of the file the hypothesis came from
	// (RulesRangeV1 or RulesPairedV2).
	Rules string `yaml:"-" json:"rules,omitempty"`
}

// AllCells returns the cells the hypothesis is judged in.
func (h Hypothesis) AllCells() []Cell {
	if h.Cell != nil {
		return append([]Cell{*h.Cell}, h.Cells...)
	}
	return h.Cells
}

type hypothesesFile struct {
	// Rules: empty for the first rules (min–max ranges), or "paired-v2".
	Rules      string       `yaml:"rules"`
	Hypotheses []Hypothesis `yaml:"hypotheses"`
}

// LoadHypotheses reads a hypotheses file and checks every hypothesis
// against the experiment: unknown strategies, scenarios, CPU settings,
// cells or metrics are refused before any run. Errors name file, line and
// field.
func LoadHypotheses(path string, spec Spec) ([]Hypothesis, error) {
	var f hypothesesFile
	root, err := readYAML(path, &f)
	if err != nil {
		return nil, err
	}
	if len(f.Hypotheses) == 0 {
		return nil, &FileError{File: path, Field: "hypotheses", Err: errors.New("none found")}
	}
	if f.Rules != RulesRangeV1 && f.Rules != RulesPairedV2 {
		return nil, &FileError{File: path, Line: lineOf(root, "rules"), Field: "rules",
			Err: fmt.Errorf("%q is not %q (or absent, for the first rules)", f.Rules, RulesPairedV2)}
	}
	cells := spec.Cells()
	ids := map[string]bool{}
	for i, h := range f.Hypotheses {
		fail := func(field string, at []any, err error) error {
			return &FileError{File: path, Line: lineOf(root, append([]any{"hypotheses", i}, at...)...),
				Field: fmt.Sprintf("hypotheses[%d] (%s).%s", i, h.ID, field), Err: err}
		}
		switch {
		case h.ID == "":
			return nil, fail("id", nil, errors.New("missing"))
		case ids[h.ID]:
			return nil, fail("id", []any{"id"}, fmt.Errorf("%q is used twice", h.ID))
		case h.Claim == "":
			return nil, fail("claim", nil, errors.New("missing"))
		case h.Phase != "" && !slices.Contains(PhaseMetrics, h.Metric):
			return nil, fail("metric", []any{"metric"}, fmt.Errorf("unknown phase metric %q (one of %s)", h.Metric, strings.Join(PhaseMetrics, ", ")))
		case h.Phase != "" && h.Minus != "" && !slices.Contains(PhaseMetrics, h.Minus):
			return nil, fail("minus", []any{"minus"}, fmt.Errorf("unknown phase metric %q", h.Minus))
		case h.Phase == "" && !slices.Contains(Metrics, h.Metric):
			return nil, fail("metric", []any{"metric"}, fmt.Errorf("unknown metric %q (one of %s)", h.Metric, strings.Join(Metrics, ", ")))
		case h.Phase == "" && h.Minus != "" && !slices.Contains(Metrics, h.Minus):
			return nil, fail("minus", []any{"minus"}, fmt.Errorf("unknown metric %q", h.Minus))
		case !slices.Contains(Operators, h.Op):
			return nil, fail("op", []any{"op"}, fmt.Errorf("%q is not one of %s", h.Op, strings.Join(Operators, " ")))
		case (h.Op == "between") != h.Threshold.Range:
			return nil, fail("threshold", []any{"threshold"}, errors.New("between takes [lo, hi]; other operators one number"))
		case h.Threshold.Range && h.Threshold.Lo > h.Threshold.Hi:
			return nil, fail("threshold", []any{"threshold"}, errors.New("lo is above hi"))
		case len(h.AllCells()) == 0:
			return nil, fail("cell", nil, errors.New("missing: give cell or cells"))
		case h.Versus != nil && h.Compare != "ratio" && h.Compare != "difference":
			return nil, fail("compare", []any{"compare"}, fmt.Errorf("%q must be ratio or difference with versus", h.Compare))
		case h.Versus == nil && h.Compare != "":
			return nil, fail("compare", []any{"compare"}, errors.New("compare needs a versus cell"))
		case h.RequiresMechanism != "" && h.RequiresMechanism != "cgroup" && h.RequiresMechanism != "affinity" && h.RequiresMechanism != "inherited":
			return nil, fail("requires_mechanism", []any{"requires_mechanism"}, errors.New("must be cgroup, affinity or inherited"))
		}
		check := append(h.AllCells(), derefCells(h.Versus)...)
		for _, c := range check {
			if err := knownCell(spec, cells, c); err != nil {
				return nil, fail("cell", []any{"cell"}, err)
			}
			if h.Phase == "" {
				continue
			}
			if p, ok := spec.Phased(c.Scenario); !ok || !slices.ContainsFunc(p.Phases, func(ph Phase) bool { return ph.Name == h.Phase }) {
				return nil, fail("phase", []any{"phase"}, fmt.Errorf("scenario %q has no phase %q", c.Scenario, h.Phase))
			}
		}
		ids[h.ID] = true
		f.Hypotheses[i].Rules = f.Rules
	}
	return f.Hypotheses, nil
}

func derefCells(c *Cell) []Cell {
	if c == nil {
		return nil
	}
	return []Cell{*c}
}

func knownCell(spec Spec, cells []Cell, c Cell) error {
	switch {
	case !slices.Contains(spec.Strategies, c.Strategy):
		return fmt.Errorf("unknown strategy %q", c.Strategy)
	case !slices.Contains(spec.Scenarios, c.Scenario):
		return fmt.Errorf("unknown scenario %q", c.Scenario)
	case !slices.Contains(names(spec.CPUs), c.CPU):
		return fmt.Errorf("unknown cpu setting %q", c.CPU)
	case !slices.Contains(cells, c):
		return fmt.Errorf("cell %s is excluded from the experiment", c)
	}
	return nil
}
