package comparecmd

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/beforeafter"
)

// intro opens compare's help: its purpose and examples.
const intro = "Judges a change against the noise: two sets of runs of one workload, before and after, metric by metric.\n\nExamples:\n" +
	"  loadlab compare results/before results/after                    # two results folders of one experiment\n" +
	"  loadlab compare before/ after/ --markdown > comment.md          # folders of loadlab run --json files\n" +
	"  loadlab compare 'before-*.json' after.json --metric accepted_per_second,duration_seconds\n\n"

// synopsis is compare's description, after the purpose and examples.
var synopsis = fmt.Sprintf(`BEFORE and AFTER are each an experiment's results folder (or its results.json), or a folder, a file or a
quoted glob of the JSON of loadlab run --json or loadlab load --json (a file may hold several, one after
another: loadlab run --json >> before.json). Both sides must be of one kind, of one experiment, and each
side of one configuration; what changed between the sides is printed. Only an experiment's valid runs count.

For each metric both sides have (and each cell of results folders): the median before and after, the
ratio after/before with a distribution-free interval (the difference, in the metric's unit, where a
value is 0), a two-sided rank test and a decision: better, worse, no change or not enough runs. The test
is exact up to %d values (both sides together, or pairs), beyond that the normal approximation with a
continuity correction, marked "normal" in the output. It is paired by seed (Wilcoxon signed-rank on the
log ratios, Walsh-average interval) when both sides ran the same seeds with pairs enough, else unpaired
(Mann-Whitney, Hodges-Lehmann interval), which the shared seeds make only more cautious. Each metric's
direction (a higher accepted rate is better; more latency, rejections, timeouts or time worse) is
declared, not guessed.

False alarms: a change is called only when its p, adjusted by Holm over every comparison whose values
vary (those where every value is equal cannot change and are not counted), is at most --alpha, and it
moves the metric by at least --min-effect, a relative change: where the median before is 0 there is
none, and a significant difference is called whatever its size (no timeouts before, one a run after, is
worse). Two sets of runs of one configuration are then called different with a chance of at most
--alpha. Two-sided exact tests need runs: with n runs a side the smallest p is 2/C(2n,n), with n pairs
2/2^n. At --alpha 0.05 a change can be called over up to:
%sToo few runs for the level exits 2 and says how many are needed. The comparisons are counted over every
cell together, the family whose false alarms --alpha bounds, and only those whose values vary, so one
stray timeout where there were none adds one: 5 runs a side cover the default metrics of one cell of the
lab, not of two. With results folders of several cells, compare the cells and metrics that matter
(--cell, --metric), or run more.

Exit codes: 0 no significant regression beyond the minimum effect; 99 one or more (each metric and cell
named, as a breached --threshold); 2 bad input: unreadable results, different kinds, experiments, cells
or configurations within a side, an unknown metric, too few runs.
`, beforeafter.ExactLimit, reach(beforeafter.Defaults().Alpha))

// reach says over how many comparisons a few numbers of runs (and of
// pairs) can call a change at alpha, a line each: 5 runs a side cover the
// default metrics of one cell with the lab's two dependencies.
func reach(alpha float64) string {
	var b strings.Builder
	for _, n := range []int{4, 5, 6, 7} {
		least := beforeafter.LeastUnpaired(n, n)
		fmt.Fprintf(&b, "  %d comparison%s with %d runs a side (smallest p %.2g)\n", int(alpha/least), plural(int(alpha/least)), n, least)
	}
	least := beforeafter.LeastPaired(8)
	fmt.Fprintf(&b, "  %d comparisons with 8 pairs (smallest p %.2g)\n", int(alpha/least), least)
	return b.String()
}

// groups shows compare's flags by what they are about.
var groups = []cli.Group{
	{Name: "What is compared", Flags: []string{"metric", "cell"}},
	{Name: "False alarms", Flags: []string{"alpha", "min-effect"}},
	{Name: "Output", Flags: []string{"json", "markdown"}},
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
