// Package threshold reads pass/fail conditions on a result's figures —
// "rejected<1%", "write_unknown==0", "p99_ms<300",
// "accepted_per_second>50" — and checks a result against them. A run that
// breaches one fails, with each breach named and its measured value.
package threshold

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/mockservice/field"
)

// ExitBreached is the exit code of a command whose result breached a
// threshold (k6's, for the same meaning).
const ExitBreached = 99

// Threshold is one condition: Metric Op Value, Value a percentage of the
// result's total when Percent.
type Threshold struct {
	Text    string
	Metric  string
	Op      string
	Value   float64
	Percent bool
}

var ops = []string{"<=", ">=", "==", "!=", "<", ">"} // longest first

// Parse reads "metric op value[%]"; the metric must be one of names.
func Parse(s string, names []string) (Threshold, error) {
	t := Threshold{Text: strings.TrimSpace(s)}
	text := strings.ReplaceAll(t.Text, " ", "")
	for _, op := range ops {
		i := strings.Index(text, op)
		if i < 0 {
			continue
		}
		t.Metric, t.Op = text[:i], op
		v := text[i+len(op):]
		if t.Percent = strings.HasSuffix(v, "%"); t.Percent {
			v = strings.TrimSuffix(v, "%")
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return t, fmt.Errorf("%q: %q is not a number (e.g. rejected<1%%, write_unknown==0)", s, v)
		}
		t.Value = f
		if !known(names, t.Metric) {
			hint := ""
			if c := field.Closest(t.Metric, names); c != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", c)
			}
			return t, fmt.Errorf("%q: no figure %q%s; the figures: %s", s, t.Metric, hint, strings.Join(names, ", "))
		}
		return t, nil
	}
	return t, fmt.Errorf("%q: want METRIC OP VALUE with OP one of < <= > >= == != (e.g. rejected<1%%, write_unknown==0)", s)
}

// known says whether metric is one of names, where a name "p.NAME" stands
// for every "p.x" (rejected.NAME: a dependency's).
func known(names []string, metric string) bool {
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, ".NAME"); n == metric || ok && strings.HasPrefix(metric, p+".") && len(metric) > len(p)+1 {
			return true
		}
	}
	return false
}

// ParseAll reads a comma-separated list of thresholds (a flag's value).
func ParseAll(list string, names []string) ([]Threshold, error) {
	var out []Threshold
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		t, err := Parse(s, names)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Outcome is a threshold checked: the figure measured (a percentage of
// Of when the threshold is one, Count being the figure) and whether it
// held.
type Outcome struct {
	Threshold
	Measured  float64
	Count, Of float64
	Held      bool
}

func (o Outcome) String() string {
	unit, verdict := "", "held"
	if o.Percent {
		unit = fmt.Sprintf("%% (%s of %s)", strconv.FormatFloat(o.Count, 'g', 6, 64), strconv.FormatFloat(o.Of, 'g', 6, 64))
	}
	if !o.Held {
		verdict = "BREACHED"
	}
	return fmt.Sprintf("%s: measured %s%s, %s", o.Text, strconv.FormatFloat(o.Measured, 'g', 6, 64), unit, verdict)
}

// Totals is what a percentage is of: a metric's own total in Of (a
// dependency's calls for its rejections), else Default (a run's records,
// a load's requests).
type Totals struct {
	Default float64
	Of      map[string]float64
}

func (t Totals) of(metric string) float64 {
	if v, ok := t.Of[metric]; ok {
		return v
	}
	return t.Default
}

// Check checks figures against every threshold, a percentage of what
// totals says it is of.
func Check(ts []Threshold, figures map[string]float64, totals Totals) []Outcome {
	out := make([]Outcome, 0, len(ts))
	for _, t := range ts {
		v := figures[t.Metric]
		o := Outcome{Threshold: t, Count: v}
		if t.Percent {
			o.Of, v = totals.of(t.Metric), 0
			if o.Of > 0 {
				v = 100 * o.Count / o.Of
			}
		}
		o.Measured, o.Held = v, holds(v, t.Op, t.Value)
		out = append(out, o)
	}
	return out
}

// Breached lists the outcomes that did not hold.
func Breached(os []Outcome) []Outcome {
	var out []Outcome
	for _, o := range os {
		if !o.Held {
			out = append(out, o)
		}
	}
	return out
}

func holds(v float64, op string, w float64) bool {
	switch op {
	case "<":
		return v < w
	case "<=":
		return v <= w
	case ">":
		return v > w
	case ">=":
		return v >= w
	case "==":
		return v == w
	}
	return v != w
}

// Figures are the top-level numeric fields of v's JSON, by their keys:
// the figures a threshold can name, as the command's --json output names
// them.
func Figures(v any) map[string]float64 {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := map[string]float64{}
	for k, x := range m {
		if f, ok := x.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// Names lists figures' keys, sorted.
func Names(figures map[string]float64) []string {
	return slices.Sorted(maps.Keys(figures))
}

// Flag is a command's --threshold: repeatable, each value a
// comma-separated list, each threshold checked against Names as given.
type Flag struct {
	Names []string
	List  []Threshold
	given []string
}

func (f *Flag) String() string { return strings.Join(f.given, ",") }

// Each checks that every threshold on prefix.x names an x of names (a
// dependency of the pipeline run): one that does not would measure 0.
func (f *Flag) Each(prefix string, names []string) error {
	for _, t := range f.List {
		x, ok := strings.CutPrefix(t.Metric, prefix+".")
		if !ok || slices.Contains(names, x) {
			continue
		}
		hint := ""
		if c := field.Closest(x, names); c != "" {
			hint = fmt.Sprintf(" (did you mean %s.%s?)", prefix, c)
		}
		return fmt.Errorf("%q: no %q to measure%s; there are: %s", t.Text, x, hint, strings.Join(names, ", "))
	}
	return nil
}

func (f *Flag) Set(s string) error {
	ts, err := ParseAll(s, f.Names)
	f.given, f.List = append(f.given, s), append(f.List, ts...)
	return err
}

// Usage is the flag's help: what a percentage is of (total), a few
// examples, and the figures besides the --json output's numbers (extra).
func Usage(total, examples, extra string) string {
	return "a pass/fail condition on the result: METRIC OP VALUE, OP one of < <= > >= == !=, VALUE% a percentage\n" +
		"of the " + total + "; e.g. " + examples + " (repeat the flag, or separate with commas).\n" +
		"METRIC is a number of the --json output, or " + extra + ".\n" +
		"Each threshold's measured value is printed after the result; a breach exits 99"
}

// Breach is the error of a result that breached thresholds: each named
// with its measured value.
type Breach struct {
	Command  string
	Checked  int
	Breached []Outcome
}

func (b *Breach) Error() string {
	texts := make([]string, len(b.Breached))
	for i, o := range b.Breached {
		texts[i] = o.String()
	}
	return fmt.Sprintf("%s: %d of %d thresholds breached: %s", b.Command, len(b.Breached), b.Checked, strings.Join(texts, "; "))
}

// Report checks figures against ts, prints every outcome on w ("threshold
// rejected<1%: measured 0.2% (2 of 1000), held") and returns a *Breach
// when any did not hold; nil when all held or there are none.
func Report(w io.Writer, command string, ts []Threshold, figures map[string]float64, totals Totals) error {
	if len(ts) == 0 {
		return nil
	}
	outs := Check(ts, figures, totals)
	for _, o := range outs {
		fmt.Fprintf(w, "threshold %s\n", o)
	}
	if b := Breached(outs); len(b) > 0 {
		return &Breach{Command: command, Checked: len(outs), Breached: b}
	}
	return nil
}
