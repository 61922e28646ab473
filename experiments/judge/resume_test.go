package judge

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Runs of one experiment by one binary are the same; another binary, or
// one whose SHA-256 could not be read (two empty strings are not a match),
// is not.
func TestRunDifferenceOfTheBinary(t *testing.T) {
	with := func(sha string) *resultsfile.Results {
		return &resultsfile.Results{ExperimentSHA256: "e", HypothesesSHA256: "h", Environment: resultsfile.Environment{BinarySHA256: sha}}
	}
	for _, c := range []struct {
		a, b, want string
	}{
		{"abc", "abc", ""},
		{"abc", "abd", "the loadlab binary (SHA-256) differs"},
		{"", "", "could not be read"},
		{"abc", "", "could not be read"},
	} {
		if got := RunDifference(with(c.a), with(c.b)); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("binaries %q and %q: %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
