package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadlab/loadlab/experiments/report/charts"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// WriteMarkdown writes the report: the comparison tables in the shape of the
// lab's, the per-cell details with the Little's-law bound, and the verdicts.
func WriteMarkdown(w io.Writer, r *resultsfile.Results) {
	rep := newReport(r)
	fmt.Fprintf(w, "# %s\n\n%s\n\n", rep.Title, rep.Setup)
	if rep.Strategies != "" {
		fmt.Fprintf(w, "%s\n\n", rep.Strategies)
	}
	if rep.OwnIntro != "" {
		fmt.Fprintf(w, "%s\n\n", rep.OwnIntro)
		markdownTable(w, rep.OwnCopies.Head, rep.OwnCopies.Rows)
		fmt.Fprintf(w, "Scenarios: %s.\n\n", strings.Join(rep.OwnScenarios, "; "))
	}
	fmt.Fprintf(w, "%s\nHypotheses %s, SHA-256 `%s`, preregistered at commit %s.\n\n",
		rep.Ran, rep.HypothesesFile, rep.HypothesesSHA, rep.LockCommit)
	if rep.Partial != "" {
		fmt.Fprintf(w, "**%s**\n\n", rep.Partial)
	}
	writeAnswerMarkdown(w, r, rep)
	fmt.Fprintf(w, "## Time-scale calibration\n\n")
	if len(rep.Calibration.Rows) > 0 {
		fmt.Fprintf(w, "%s\n\n", rep.CalibrationIntro)
		markdownTable(w, rep.Calibration.Head, rep.Calibration.Rows)
	}
	fmt.Fprintf(w, "%s\n\n", rep.CalibrationNote)
	writeAdvisedMarkdown(w, rep)
	fmt.Fprintf(w, "## Accepted records per second\n\n%s\n\n", acceptedIntro)
	for _, t := range rep.Accepted {
		fmt.Fprintf(w, "**%s**\n\n", t.Caption)
		markdownTable(w, t.Head, t.Rows)
	}
	fmt.Fprintf(w, "## Every cell\n\n%s\n\n", rep.CellsIntro)
	markdownTable(w, rep.Cells.Head, rep.Cells.Rows)
	if len(rep.Derived.Rows) > 0 {
		fmt.Fprintf(w, "%s\n\n", rep.Derived.Caption)
		markdownTable(w, rep.Derived.Head, rep.Derived.Rows)
	}
	writePhasedMarkdown(w, rep)
	writeAdaptiveMarkdown(w, r)
	fmt.Fprintf(w, "## Verdicts\n\n%s\n\n", rep.VerdictsIntro)
	if rep.Exploratory != "" {
		fmt.Fprintf(w, "**Exploratory: %s. The verdicts below are computed, not findings.**\n\n", rep.Exploratory)
	}
	var rows [][]string
	for _, v := range rep.Verdicts {
		verdict := "**" + v.Verdict + "**"
		if v.Label != "" {
			verdict = v.Label + ": " + verdict
		}
		rows = append(rows, []string{v.ID, verdict, v.Claim, v.Test, strings.Join(v.Measured, "<br>"), v.Note})
	}
	markdownTable(w, []string{"id", "verdict", "claim", "test", "measured: median [min, max]", "note"}, rows)
	fmt.Fprintln(w, rep.Counts)
	if len(rep.Excluded) > 0 {
		fmt.Fprintf(w, "\n## Excluded runs\n\n")
		for _, f := range rep.Excluded {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
}

func markdownTable(w io.Writer, head []string, rows [][]string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	fmt.Fprintf(w, "| %s |\n|", strings.Join(head, " | "))
	for range head {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i := range r {
			cells[i] = esc(r[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// writeAnswerMarkdown leads with the answer: the verdict counts, a line per
// verdict, and the accepted rates' chart that WriteReports draws beside.
func writeAnswerMarkdown(w io.Writer, r *resultsfile.Results, rep report) {
	if len(rep.Verdicts) == 0 && len(r.Experiment.CPUs) == 0 {
		return
	}
	fmt.Fprintf(w, "## The answer\n\n")
	if len(rep.Verdicts) > 0 {
		fmt.Fprintf(w, "%s\n\n", rep.Counts)
		var rows [][]string
		for _, v := range rep.Verdicts {
			claim := v.Claim
			if v.Label != "" {
				claim += " (" + v.Label + ")"
			}
			rows = append(rows, []string{v.ID, "**" + v.Verdict + "**", claim})
		}
		markdownTable(w, []string{"id", "verdict", "claim"}, rows)
	}
	for _, a := range charts.Answers(r, r.Experiment.CPUs[0].Name) {
		fmt.Fprintf(w, "![%s](%s)\n\n", a.Alt, answerFile(a))
	}
}
