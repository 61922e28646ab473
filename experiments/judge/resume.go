package judge

import (
	"cmp"
	"fmt"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// RunDifference says how b is not the same experiment as a, run by the
// same binary, so that runs of both cannot be results of one: another
// experiment file, design, hypotheses, lock, binary or shard; "" when b is
// the same.
func RunDifference(a, b *resultsfile.Results) string {
	differ := func(what, x, y string) string {
		if x == y {
			return ""
		}
		return fmt.Sprintf("the %s differs: %s, now %s", what, abbrev(x), abbrev(y))
	}
	designDiff := ""
	if d := firstDifference(a.Experiment, b.Experiment); d != "" {
		designDiff = "the design differs: " + d
	}
	shard := func(r *resultsfile.Results) string {
		if r.Shard == nil {
			return "the whole matrix"
		}
		return "shard " + r.Shard.Shard.String()
	}
	// A binary whose SHA-256 could not be read is not known to be the same.
	binary := differ("loadlab binary (SHA-256)", a.Environment.BinarySHA256, b.Environment.BinarySHA256)
	if a.Environment.BinarySHA256 == "" || b.Environment.BinarySHA256 == "" {
		binary = "the loadlab binary's SHA-256 could not be read, so it is not known to be the one that began the experiment"
	}
	return cmp.Or(differ("experiment file (SHA-256)", a.ExperimentSHA256, b.ExperimentSHA256), designDiff,
		differ("hypotheses file (SHA-256)", a.HypothesesSHA256, b.HypothesesSHA256),
		differ("preregistration lock", jsonString(a.Lock), jsonString(b.Lock)),
		binary, differ("part of the matrix", shard(a), shard(b)))
}
