package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// advisedIntro says what the advised strategies table shows, and what a
// knee counts.
var advisedIntro = "Before the matrix each dependency of the lab's pipeline was probed on the mock service under the scenario's profile " +
	"(loadlab probe), and loadlab advise made the strategy: permits at each knee (never past the first rejection), records in flight " +
	"by Little's law for as fast as the bottleneck allows. Rates are per lab second (the probes' real rates × the time scale); times " +
	"are lab seconds. results.json keeps every probe step. " + fmt.Sprintf("The knee is the smallest concurrency probed whose successes "+
	"per second reach %.0f%% of the plateau. ", 100*probe.KneeFraction) + "It counts calls in flight at the client, network round trips " +
	"included, so where the service queues, a knee at or a little above its workers is the concurrency that keeps every worker busy " +
	"while answers travel back. The first rejection is the smallest concurrency at which the service refused a call: its workers + " +
	"queue slots + 1 where it rejects beyond its queue."

// advisedTable shows, per scenario, the probes' findings and the strategy
// advised from them.
func advisedTable(adv map[string]*resultsfile.AdvisedStrategy) (table, []string) {
	t := table{Head: []string{"scenario", "dependency", "service time (lab s)", "knee", "first rejection", "permits (from)",
		"calls/s at permits (lab)", "records/s it allows (lab)", "records in flight", "bottleneck"}}
	var notes []string
	for _, sc := range slices.Sorted(maps.Keys(adv)) {
		a := adv[sc]
		if a.Failed != "" {
			t.Rows = append(t.Rows, []string{sc, "—", "", "", "", "", "", "", "", "no advice: " + a.Failed})
			continue
		}
		if len(a.Advice.Dependencies) == 0 { // a strategy file without advice
			for _, dep := range slices.Sorted(maps.Keys(a.Strategy.Permits)) {
				t.Rows = append(t.Rows, []string{sc, dep, "", "", "", fmt.Sprintf("%d (%s)", a.Strategy.Permits[dep], a.From),
					"", "", fmt.Sprint(a.Strategy.RecordsInFlight), ""})
			}
			continue
		}
		scale := a.TimeScale
		for _, dep := range slices.Sorted(maps.Keys(a.Advice.Dependencies)) {
			d, p := a.Advice.Dependencies[dep], a.Probes[dep]
			t.Rows = append(t.Rows, []string{sc, dep, fmt.Sprintf("%.4g", d.ServiceTimeSeconds/scale), optInt(p.Knee), optInt(p.RejectionsBeginAt),
				fmt.Sprintf("%d (%s)", d.Permits, d.PermitsFrom), fmt.Sprintf("%.4g", d.CallsPerSecond*scale),
				fmt.Sprintf("%.4g", d.RecordsPerSecond*scale), fmt.Sprint(a.Strategy.RecordsInFlight), bottleneck(a.Advice, dep)})
		}
		for _, w := range a.Advice.Warnings {
			notes = append(notes, sc+": "+w)
		}
		if a.Shortened != "" {
			notes = append(notes, sc+": probes shortened: "+a.Shortened)
		}
	}
	return t, notes
}

func bottleneck(a advise.Advice, dep string) string {
	if a.Bottleneck != dep {
		return ""
	}
	return "yes"
}

func optInt(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// writeAdvisedMarkdown writes the advised strategies' section, if any.
func writeAdvisedMarkdown(w io.Writer, rep report) {
	if len(rep.Advised.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Advised strategies\n\n%s\n\n", rep.AdvisedIntro)
	markdownTable(w, rep.Advised.Head, rep.Advised.Rows)
	if len(rep.AdvisedNotes) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(rep.AdvisedNotes, "<br>"))
	}
}
