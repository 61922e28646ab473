package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Verdicts.
const (
	Supported    = "supported"
	Refuted      = "refuted"
	Inconclusive = "inconclusive"
)

// Operators of a hypothesis.
var Operators = []string{"==", "!=", "<", "<=", ">", ">=", "between"}

// Metrics every run records; hypotheses may name any of them.
var Metrics = []string{
	"accepted_per_second", "duration_seconds", "write_rejections", "peak_concurrent_writes",
	"peak_in_flight_enrichment", "peak_in_flight_records", "incomplete", "incomplete_fraction",
	"complete", "write_rejected", "failed", "permit_timeouts", "call_timeouts", "errors",
	"gomaxprocs", "num_cpu", "cpu_quota", "records_in_flight", "peak_records_in_flight", "stored_writes",
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
	ID                string    `yaml:"id" json:"id"`
	Claim             string    `yaml:"claim" json:"claim"`
	Source            string    `yaml:"source" json:"source"`
	Metric            string    `yaml:"metric" json:"metric"`
	Minus             string    `yaml:"minus,omitempty" json:"minus,omitempty"`
	Cell              *Cell     `yaml:"cell,omitempty" json:"cell,omitempty"`
	Cells             []Cell    `yaml:"cells,omitempty" json:"cells,omitempty"`
	Versus            *Cell     `yaml:"versus,omitempty" json:"versus,omitempty"`
	Compare           string    `yaml:"compare,omitempty" json:"compare,omitempty"`
	RequiresMechanism string    `yaml:"requires_mechanism,omitempty" json:"requires_mechanism,omitempty"`
	Op                string    `yaml:"op" json:"op"`
	Threshold         Threshold `yaml:"threshold" json:"threshold"`
}

// AllCells returns the cells the hypothesis is judged in.
func (h Hypothesis) AllCells() []Cell {
	if h.Cell != nil {
		return append([]Cell{*h.Cell}, h.Cells...)
	}
	return h.Cells
}

type hypothesesFile struct {
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
		case !slices.Contains(Metrics, h.Metric):
			return nil, fail("metric", []any{"metric"}, fmt.Errorf("unknown metric %q (one of %s)", h.Metric, strings.Join(Metrics, ", ")))
		case h.Minus != "" && !slices.Contains(Metrics, h.Minus):
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
		}
		ids[h.ID] = true
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

// Lock is the preregistration record of a hypotheses file.
type Lock struct {
	File      string    `json:"file"`
	SHA256    string    `json:"sha256"`
	GitCommit string    `json:"git_commit,omitempty"`
	GitClean  bool      `json:"git_clean"`
	LockedAt  time.Time `json:"locked_at"`
}

// LockPath is where the lock of a hypotheses file lives.
func LockPath(hypotheses string) string {
	return strings.TrimSuffix(hypotheses, filepath.Ext(hypotheses)) + ".lock"
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Preregister writes the lock of a hypotheses file: its SHA-256 and, in a
// git repository, the commit and whether the file is committed unchanged.
func Preregister(hypotheses string, now time.Time) (Lock, error) {
	sum, err := FileSHA256(hypotheses)
	if err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	l := Lock{File: filepath.Base(hypotheses), SHA256: sum, LockedAt: now.UTC()}
	dir := filepath.Dir(hypotheses)
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
		l.GitCommit = strings.TrimSpace(string(out))
		err := exec.Command("git", "-C", dir, "diff", "--quiet", "HEAD", "--", filepath.Base(hypotheses)).Run()
		tracked := exec.Command("git", "-C", dir, "ls-files", "--error-unmatch", filepath.Base(hypotheses)).Run() == nil
		l.GitClean = err == nil && tracked
	}
	b, _ := json.MarshalIndent(l, "", "  ")
	if err := os.WriteFile(LockPath(hypotheses), append(b, '\n'), 0o644); err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	return l, nil
}

// ErrLockMismatch: the hypotheses file changed after it was preregistered.
var ErrLockMismatch = errors.New("hypotheses file does not match its preregistration lock")

// CheckLock verifies a hypotheses file against its lock.
func CheckLock(hypotheses string) (Lock, error) {
	var l Lock
	b, err := os.ReadFile(LockPath(hypotheses))
	if err != nil {
		return l, fmt.Errorf("%w: no lock (%v); run loadlab preregister first", ErrLockMismatch, err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("lock %s: %w", LockPath(hypotheses), err)
	}
	sum, err := FileSHA256(hypotheses)
	if err != nil {
		return l, err
	}
	if sum != l.SHA256 {
		return l, fmt.Errorf("%w: %s has SHA-256 %s, locked %s", ErrLockMismatch, hypotheses, sum[:12], l.SHA256[:min(12, len(l.SHA256))])
	}
	return l, nil
}

// Verdict is a hypothesis judged against the runs.
type Verdict struct {
	ID        string        `json:"id"`
	Claim     string        `json:"claim"`
	Verdict   string        `json:"verdict"`
	Op        string        `json:"op"`
	Threshold Threshold     `json:"threshold"`
	Cells     []CellVerdict `json:"cells"`
	Note      string        `json:"note,omitempty"`
}

// CellVerdict is the judgement in one cell: the value's median and range.
type CellVerdict struct {
	Cell    Cell    `json:"cell"`
	Median  float64 `json:"median"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Runs    int     `json:"runs"`
	Verdict string  `json:"verdict"`
	Note    string  `json:"note,omitempty"`
}

// Judge decides every hypothesis from the runs. A cell without successful
// runs, or whose CPU mechanism is not the one required, is inconclusive.
func Judge(hs []Hypothesis, runs []RunRecord) []Verdict {
	var out []Verdict
	for _, h := range hs {
		v := Verdict{ID: h.ID, Claim: h.Claim, Op: h.Op, Threshold: h.Threshold}
		for _, c := range h.AllCells() {
			v.Cells = append(v.Cells, judgeCell(h, c, runs))
		}
		v.Verdict = Supported
		for _, cv := range v.Cells {
			switch {
			case cv.Verdict == Refuted:
				v.Verdict = Refuted
			case cv.Verdict == Inconclusive && v.Verdict != Refuted:
				v.Verdict = Inconclusive
			}
			if cv.Note != "" && v.Note == "" {
				v.Note = cv.Note
			}
		}
		out = append(out, v)
	}
	return out
}

func values(runs []RunRecord, c Cell, metric, minus string) (vals []float64, mechanisms []string) {
	for _, r := range runs {
		if r.Cell != c || r.Failed != "" {
			continue
		}
		v, ok := r.Metrics[metric]
		if !ok {
			continue
		}
		if minus != "" {
			m, ok := r.Metrics[minus]
			if !ok {
				continue
			}
			v -= m
		}
		vals = append(vals, v)
		mechanisms = append(mechanisms, r.Mechanism)
	}
	return vals, mechanisms
}

func judgeCell(h Hypothesis, c Cell, runs []RunRecord) CellVerdict {
	cv := CellVerdict{Cell: c}
	vals, mechs := values(runs, c, h.Metric, h.Minus)
	cv.Runs = len(vals)
	if len(vals) == 0 {
		cv.Verdict, cv.Note = Inconclusive, "no successful run in "+c.String()
		return cv
	}
	if h.RequiresMechanism != "" {
		for _, m := range mechs {
			if !strings.HasPrefix(m, h.RequiresMechanism) {
				cv.Verdict = Inconclusive
				cv.Note = fmt.Sprintf("not tested: needs a %s limit, the run had %q", h.RequiresMechanism, m)
				st := Summarize(vals)
				cv.Median, cv.Min, cv.Max = st.Median, st.Min, st.Max
				return cv
			}
		}
	}
	st := Summarize(vals)
	lo, mid, hi := st.Min, st.Median, st.Max
	if h.Versus != nil {
		other, _ := values(runs, *h.Versus, h.Metric, h.Minus)
		if len(other) == 0 {
			cv.Verdict, cv.Note = Inconclusive, "no successful run in "+h.Versus.String()
			return cv
		}
		o := Summarize(other)
		switch h.Compare {
		case "ratio":
			if o.Min <= 0 {
				cv.Verdict, cv.Note = Inconclusive, "ratio with a zero or negative denominator"
				return cv
			}
			lo, mid, hi = st.Min/o.Max, st.Median/o.Median, st.Max/o.Min
		case "difference":
			lo, mid, hi = st.Min-o.Max, st.Median-o.Median, st.Max-o.Min
		}
	}
	cv.Median, cv.Min, cv.Max = mid, lo, hi
	cv.Verdict = decide(h.Op, h.Threshold, lo, hi)
	return cv
}

// decide judges the range [lo, hi] against op and threshold: supported if
// all of it satisfies the claim, refuted if none does, else inconclusive.
func decide(op string, t Threshold, lo, hi float64) string {
	var all, none bool
	x := t.Value
	switch op {
	case "<":
		all, none = hi < x, lo >= x
	case "<=":
		all, none = hi <= x, lo > x
	case ">":
		all, none = lo > x, hi <= x
	case ">=":
		all, none = lo >= x, hi < x
	case "==":
		all, none = lo == x && hi == x, x < lo || x > hi
	case "!=":
		all, none = x < lo || x > hi, lo == x && hi == x
	case "between":
		all, none = lo >= t.Lo && hi <= t.Hi, hi < t.Lo || lo > t.Hi
	}
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case all:
		return Supported
	case none:
		return Refuted
	}
	return Inconclusive
}
