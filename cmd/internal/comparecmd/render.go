package comparecmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/loadlab/loadlab/experiments/beforeafter"
)

// outcome is everything a comparison prints: the two sides, what changed
// between them, the report and the regressions.
type outcome struct {
	Before      sideInfo           `json:"before"`
	After       sideInfo           `json:"after"`
	Changed     []string           `json:"changed,omitempty"`
	Rule        string             `json:"rule"`
	Report      beforeafter.Report `json:"report"`
	Regressions []string           `json:"regressions,omitempty"`
	// TooFewRuns says why nothing was judged, when it was not.
	TooFewRuns string `json:"too_few_runs,omitempty"`
}

// sideInfo says what one side is.
type sideInfo struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	Runs   int    `json:"runs"`
	Cells  int    `json:"cells"`
}

func infoOf(in *input) sideInfo {
	return sideInfo{Path: in.arg, Source: in.source, Runs: in.runs(), Cells: len(in.side.Cells)}
}

// String is "5 runs, loadlab run --json", with the cells when more than one.
func (s sideInfo) String() string {
	if s.Cells > 1 {
		return fmt.Sprintf("%d run%s in %d cells, %s", s.Runs, plural(s.Runs), s.Cells, s.Source)
	}
	return fmt.Sprintf("%d run%s, %s", s.Runs, plural(s.Runs), s.Source)
}

// rule says how a change is called, with the figures in force and the
// tests the rows used.
func rule(r beforeafter.Report) string {
	var tests []string
	normal := 0
	for _, row := range r.Rows {
		if row.Test != "" && !slices.Contains(tests, row.Test) {
			tests = append(tests, row.Test)
		}
		if row.Normal {
			normal++
		}
	}
	used := ""
	if len(tests) > 0 {
		used = ": " + strings.Join(tests, ", ")
	}
	how := "two-sided and exact" + used
	if normal > 0 {
		how = fmt.Sprintf("two-sided%s, exact up to %d values, beyond (%d of the comparisons, marked \"normal\") by the normal "+
			"approximation with a continuity correction", used, beforeafter.ExactLimit, normal)
	}
	return fmt.Sprintf("a change is called when its Holm-adjusted p is at most %g over the %d comparisons whose values vary "+
		"(the chance of any false call at most %g) and it moves the metric by at least %g%% (--min-effect); "+
		"tests %s; intervals at %g%%", r.Alpha, r.Comparisons, r.Alpha, 100*r.MinEffect, how, 100*r.Level)
}

// num is a figure to 4 significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func withUnit(v float64, unit string) string { return num(v) + " " + unit }

// columns are a row's figures as both tables print them: cell, metric,
// before and after medians with their units, the change with its
// interval and coverage, the test, p and Holm's p, the decision.
func columns(r beforeafter.Row) []string {
	change, test, p, holm := "—", "—", "—", "—"
	if r.Estimate != nil {
		switch r.Scale {
		case beforeafter.Ratio:
			change = fmt.Sprintf("%s× [%s, %s]", num(*r.Estimate), num(*r.Lo), num(*r.Hi))
		default:
			change = fmt.Sprintf("%+g %s [%+g %s, %+g %s]", roundTo4(*r.Estimate), r.Metric.Unit,
				roundTo4(*r.Lo), r.Metric.Unit, roundTo4(*r.Hi), r.Metric.Unit)
		}
		change += fmt.Sprintf(" %.1f%%", 100**r.Coverage)
	}
	if r.Test != "" {
		test = strings.Fields(r.Test)[0]
	}
	if r.Normal {
		test += ", normal"
	}
	if r.P != nil {
		p = strconv.FormatFloat(*r.P, 'g', 2, 64)
	}
	if r.HolmP != nil {
		holm = strconv.FormatFloat(*r.HolmP, 'g', 2, 64)
	}
	median := func(s beforeafter.Summary) string {
		if s.Runs == 0 {
			return "—"
		}
		return fmt.Sprintf("%s (%d)", withUnit(s.Median, r.Metric.Unit), s.Runs)
	}
	return []string{r.Cell, r.Metric.Name, median(r.Before), median(r.After), change, test, p, holm, string(r.Decision)}
}

func roundTo4(v float64) float64 { f, _ := strconv.ParseFloat(num(v), 64); return f }

var headers = []string{"cell", "metric", "before: median (runs)", "after: median (runs)", "after/before [interval] coverage",
	"test", "p", "Holm p", "decision"}

// writeText prints the comparison for people.
func writeText(w io.Writer, o outcome) {
	fmt.Fprintf(w, "before: %s (%s)\nafter:  %s (%s)\n", o.Before.Path, o.Before, o.After.Path, o.After)
	for _, c := range o.Changed {
		fmt.Fprintf(w, "changed: %s\n", c)
	}
	fmt.Fprintf(w, "rule: %s\n\n", o.Rule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(headers, "\t")))
	for _, r := range o.Report.Rows {
		fmt.Fprintln(tw, strings.Join(columns(r), "\t"))
	}
	tw.Flush()
	writeNotes(w, o.Report, "")
	fmt.Fprintln(w)
	fmt.Fprintln(w, verdict(o))
}

// writeNotes prints the rows' notes, each once with the cells and
// metrics it is about.
func writeNotes(w io.Writer, r beforeafter.Report, bullet string) {
	var notes []string
	about := map[string][]string{}
	for _, row := range r.Rows {
		if row.Note == "" {
			continue
		}
		if _, ok := about[row.Note]; !ok {
			notes = append(notes, row.Note)
		}
		about[row.Note] = append(about[row.Note], row.Cell+" "+row.Metric.Name)
	}
	for _, n := range notes {
		rows := about[n]
		if len(rows) > 3 {
			rows = append(rows[:3:3], fmt.Sprintf("and %d more", len(about[n])-3))
		}
		fmt.Fprintf(w, "%snote: %s: %s\n", bullet, strings.Join(rows, ", "), n)
	}
}

// verdict is the comparison's last line.
func verdict(o outcome) string {
	if o.TooFewRuns != "" {
		return "NOT JUDGED: too few runs: " + o.TooFewRuns
	}
	if len(o.Regressions) == 0 {
		return "no regression beyond the noise and the minimum effect"
	}
	return fmt.Sprintf("REGRESSION: %d of %d comparisons worse: %s", len(o.Regressions), o.Report.Comparisons, strings.Join(o.Regressions, "; "))
}

// writeMarkdown prints the comparison as Markdown, for a CI comment.
func writeMarkdown(w io.Writer, o outcome) {
	fmt.Fprintf(w, "**loadlab compare**: before `%s` (%s), after `%s` (%s).\n\n", o.Before.Path, o.Before, o.After.Path, o.After)
	for _, c := range o.Changed {
		fmt.Fprintf(w, "- changed: %s\n", c)
	}
	fmt.Fprintf(w, "- rule: %s\n\n", o.Rule)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(headers, " | "), strings.Repeat(" --- |", len(headers)))
	for _, r := range o.Report.Rows {
		cols := columns(r)
		if r.Decision == beforeafter.Worse {
			cols[len(cols)-1] = "**worse**"
		}
		for i, c := range cols {
			cols[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
	}
	fmt.Fprintln(w)
	writeNotes(w, o.Report, "- ")
	fmt.Fprintf(w, "\n**%s**\n", verdict(o))
}

// regressions names each metric and cell called worse, with its figures.
func regressions(r beforeafter.Report) []string {
	var out []string
	for _, row := range r.Worse() {
		out = append(out, fmt.Sprintf("%s in %s (%s → %s, %s, Holm p %s)", row.Metric.Name, row.Cell,
			withUnit(row.Before.Median, row.Metric.Unit), withUnit(row.After.Median, row.Metric.Unit), columns(row)[4],
			strconv.FormatFloat(*row.HolmP, 'g', 2, 64)))
	}
	return out
}
