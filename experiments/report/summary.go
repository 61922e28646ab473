package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// WriteSummary is what a terminal gets at the end of an experiment: the
// answer, not the whole report — the runs that counted, accepted records
// per lab second by strategy and scenario for each CPU setting, every
// verdict in a line, and the verdict counts. report.md and report.html
// hold the rest.
func WriteSummary(w io.Writer, r *resultsfile.Results) {
	rep := newReport(r)
	valid := 0
	for _, run := range r.Runs {
		if run.Valid() {
			valid++
		}
	}
	with := "the server"
	if r.Experiment.Own != nil {
		with = "the virtual copies' counts"
	}
	fmt.Fprintf(w, "%s: %d of %d runs valid (reconciled with %s), %d cells\n", rep.Title, valid, len(r.Runs), with, len(r.Cells))
	if rep.Partial != "" {
		fmt.Fprintf(w, "%s\n", rep.Partial)
	}
	fmt.Fprintln(w)
	for _, t := range rep.Accepted {
		fmt.Fprintf(w, "Accepted records per lab second, %s (median, min–max):\n\n", t.Caption)
		markdownTable(w, t.Head, t.Rows)
	}
	if len(rep.Verdicts) == 0 {
		return
	}
	fmt.Fprintf(w, "Verdicts:\n\n")
	for _, v := range rep.Verdicts {
		label := ""
		if v.Label != "" {
			label = " (" + v.Label + ")"
		}
		fmt.Fprintf(w, "  %-4s %-12s %s%s\n", v.ID, v.Verdict, v.Claim, label)
	}
	fmt.Fprintf(w, "\n%s\n", rep.Counts)
}

// resumed says, of a resumed experiment, when each attempt began and how
// many of the runs each measured.
func resumed(attempts []resultsfile.Attempt) string {
	if len(attempts) < 2 {
		return ""
	}
	var each []string
	for i, a := range attempts {
		what := fmt.Sprintf("%d runs", a.Runs)
		if a.Twins > 0 {
			what += fmt.Sprintf(" and %d at time scale 1", a.Twins)
		}
		each = append(each, fmt.Sprintf("attempt %d began %s on %s: %s", i+1, a.Started.Format("2006-01-02 15:04:05Z"), a.Hostname, what))
	}
	return fmt.Sprintf(" Resumed with loadlab experiment --resume, in %d attempts: %s.", len(attempts), strings.Join(each, "; "))
}
