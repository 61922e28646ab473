package design

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/experiments/phases"
)

// Op is how a hypothesis compares its value with its threshold.
type Op string

// Operators of a hypothesis.
const (
	Equal        Op = "=="
	NotEqual     Op = "!="
	Less         Op = "<"
	LessEqual    Op = "<="
	Greater      Op = ">"
	GreaterEqual Op = ">="
	// Between takes a threshold [lo, hi].
	Between Op = "between"
)

// Operators lists every operator, for messages.
var Operators = []Op{Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, Between}

// Comparison is how a hypothesis sets a cell against its versus cell.
type Comparison string

// Comparisons of two cells.
const (
	Ratio      Comparison = "ratio"
	Difference Comparison = "difference"
)

// Rules are the judging rules of a hypotheses file.
type Rules string

// Judging rules.
const (
	// RulesRangeV1 (the rules field empty): min–max over a cell's runs; a
	// comparison uses the conservative range [min(A)/max(B),
	// max(A)/min(B)]. The rules of the first results.
	RulesRangeV1 Rules = ""
	// RulesPairedV2: a cell needs every run the experiment asks for to be
	// valid; a comparison is judged on the per-run ratios (or differences)
	// of runs paired by their number, which share the mock service's seed.
	RulesPairedV2 Rules = "paired-v2"
	// RulesPairedV3: paired-v2's, with the median's distribution-free
	// order-statistic interval (coverage stated) in place of the
	// bootstrap, and the time-scale calibration gating, cell by cell,
	// only the verdicts whose metrics a time scale can bias.
	RulesPairedV3 Rules = "paired-v3"
)

// Paired says whether the rules judge comparisons on runs paired by
// their number.
func (r Rules) Paired() bool { return r == RulesPairedV2 || r == RulesPairedV3 }

// Metrics every run records; hypotheses may name any of them.
var Metrics = []string{
	"accepted_per_second", "duration_seconds", "write_rejections", "peak_concurrent_writes",
	"peak_in_flight_enrichment", "peak_in_flight_records", "incomplete", "incomplete_fraction",
	"complete", "write_rejected", "failed", "write_unknown", "permit_timeouts", "rate_timeouts", "call_timeouts", "errors",
	"gomaxprocs", "num_cpu", "cpu_quota", "records_in_flight", "peak_records_in_flight", "stored_writes",
	"acknowledged_writes_lost",
	// Retries (C6, C2-retries; every run whose client counts attempts): requests the
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
func (h Hypothesis) MetricKey() string { return PhaseKey(h.Phase, h.Metric) }

// MinusKey is MetricKey for the subtracted metric ("" when none).
func (h Hypothesis) MinusKey() string {
	if h.Minus == "" {
		return ""
	}
	return PhaseKey(h.Phase, h.Minus)
}

// PhaseKey is the name of a phase's metric among a run's metrics:
// "phase/metric" ("metric" for the whole run's, phase "").
func PhaseKey(phase, metric string) string {
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
	ID      string     `yaml:"id" json:"id"`
	Claim   string     `yaml:"claim" json:"claim"`
	Source  string     `yaml:"source" json:"source"`
	Metric  string     `yaml:"metric" json:"metric"`
	Minus   string     `yaml:"minus,omitempty" json:"minus,omitempty"`
	Cell    *Cell      `yaml:"cell,omitempty" json:"cell,omitempty"`
	Cells   []Cell     `yaml:"cells,omitempty" json:"cells,omitempty"`
	Versus  *Cell      `yaml:"versus,omitempty" json:"versus,omitempty"`
	Compare Comparison `yaml:"compare,omitempty" json:"compare,omitempty"`
	// Phase, when set, judges the metric of that phase of a phased
	// scenario (one of PhaseMetrics) instead of the whole run's.
	Phase             string        `yaml:"phase,omitempty" json:"phase,omitempty"`
	RequiresMechanism cpulimit.Kind `yaml:"requires_mechanism,omitempty" json:"requires_mechanism,omitempty"`
	Op                Op            `yaml:"op" json:"op"`
	Threshold         Threshold     `yaml:"threshold" json:"threshold"`
	// Rules are the judging rules of the file the hypothesis came from
	// (RulesRangeV1, RulesPairedV2 or RulesPairedV3).
	Rules Rules `yaml:"-" json:"rules,omitempty"`
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
	Rules      Rules        `yaml:"rules"`
	Hypotheses []Hypothesis `yaml:"hypotheses"`
}

// LoadHypotheses reads a hypotheses file and checks every hypothesis
// against the experiment: unknown strategies, scenarios, CPU settings,
// cells or metrics are refused before any run. Errors name file, line and
// field.
func LoadHypotheses(path string, spec Spec) ([]Hypothesis, error) {
	return loadHypotheses(OS, path, spec)
}

func loadHypotheses(files Files, path string, spec Spec) ([]Hypothesis, error) {
	var f hypothesesFile
	root, err := readYAML(files, path, &f)
	if err != nil {
		return nil, err
	}
	if len(f.Hypotheses) == 0 {
		return nil, &FileError{File: path, Field: "hypotheses", Err: errors.New("none found")}
	}
	if f.Rules != RulesRangeV1 && !f.Rules.Paired() {
		return nil, failf(at("rules"), "%q is not %q or %q (or absent, for the first rules)", f.Rules, RulesPairedV3, RulesPairedV2).located(path, root)
	}
	cells := spec.Cells()
	ids := map[string]bool{}
	for i, h := range f.Hypotheses {
		if p := h.validate(spec, cells, ids); p != nil {
			// The field names the hypothesis by its id; the line is its key's.
			p.at.line = append([]any{"hypotheses", i}, p.at.line...)
			p.at.field = fmt.Sprintf("hypotheses[%d] (%s).%s", i, h.ID, p.at.field)
			return nil, p.located(path, root)
		}
		ids[h.ID] = true
		f.Hypotheses[i].Rules = f.Rules
	}
	return f.Hypotheses, nil
}

// validate checks one hypothesis against the experiment and the ids
// already used; its problem's location is within the hypothesis.
func (h Hypothesis) validate(spec Spec, cells []Cell, ids map[string]bool) *problem {
	if p := h.validateFields(ids, spec.OwnMetrics()); p != nil {
		return p
	}
	for _, c := range append(h.AllCells(), h.VersusCells()...) {
		if err := knownCell(spec, cells, c); err != nil {
			return fail(at("cell"), err)
		}
		if h.Phase == "" {
			continue
		}
		if p, ok := spec.Phased(c.Scenario); !ok || !slices.ContainsFunc(p.Phases, func(ph phases.Phase) bool { return ph.Name == h.Phase }) {
			return failf(at("phase"), "scenario %q has no phase %q", c.Scenario, h.Phase)
		}
	}
	return nil
}

// labStationMetrics are figures of the lab's mock service's stations,
// which an experiment on one's own services has by dependency instead.
var labStationMetrics = []string{"peak_in_flight_enrichment", "peak_in_flight_records", "stored_writes"}

// validateFields checks a hypothesis's own fields: id, claim, metrics,
// operator and threshold, cells, comparison, mechanism; own are the
// metrics an experiment on one's own services has besides the lab's.
func (h Hypothesis) validateFields(ids map[string]bool, own []string) *problem {
	metrics, kind := Metrics, "metric"
	if len(own) > 0 { // the lab's stations' own figures are not measured
		metrics = slices.Concat(slices.DeleteFunc(slices.Clone(Metrics), func(m string) bool { return slices.Contains(labStationMetrics, m) }), own)
	}
	if h.Phase != "" {
		metrics, kind = PhaseMetrics, "phase metric"
	}
	switch {
	case h.ID == "":
		return fail(at().named("id"), errors.New("missing"))
	case ids[h.ID]:
		return failf(at("id"), "%q is used twice", h.ID)
	case h.Claim == "":
		return fail(at().named("claim"), errors.New("missing"))
	case !slices.Contains(metrics, h.Metric):
		return failf(at("metric"), "unknown %s %q (one of %s)", kind, h.Metric, strings.Join(metrics, ", "))
	case h.Minus != "" && !slices.Contains(metrics, h.Minus):
		return failf(at("minus"), "unknown %s %q", kind, h.Minus)
	case !slices.Contains(Operators, h.Op):
		return failf(at("op"), "%q is not one of %s", h.Op, joinOps(Operators))
	case (h.Op == Between) != h.Threshold.Range:
		return fail(at("threshold"), errors.New("between takes [lo, hi]; other operators one number"))
	case h.Threshold.Range && h.Threshold.Lo > h.Threshold.Hi:
		return fail(at("threshold"), errors.New("lo is above hi"))
	case len(h.AllCells()) == 0:
		return fail(at().named("cell"), errors.New("missing: give cell or cells"))
	case h.Versus != nil && h.Compare != Ratio && h.Compare != Difference:
		return failf(at("compare"), "%q must be ratio or difference with versus", h.Compare)
	case h.Versus == nil && h.Compare != "":
		return fail(at("compare"), errors.New("compare needs a versus cell"))
	case h.RequiresMechanism != "" && !slices.Contains(cpulimit.Kinds, h.RequiresMechanism):
		return fail(at("requires_mechanism"), errors.New("must be cgroup, affinity or inherited"))
	}
	return nil
}

// named is l with its field named field, its line l's: a missing key has
// no line of its own.
func (l loc) named(field string) loc {
	l.field = field
	return l
}

func joinOps(ops []Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, " ")
}

// VersusCells is the hypothesis's versus cell, if it has one.
func (h Hypothesis) VersusCells() []Cell {
	if h.Versus == nil {
		return nil
	}
	return []Cell{*h.Versus}
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
