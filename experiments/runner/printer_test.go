package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// The time left is taken at the pace of the runs this attempt ran: a
// resumed experiment's 28 runs from its journal took none of its time.
func TestTimeLeftCountsOnlyTheRunsRunHere(t *testing.T) {
	var out strings.Builder
	p := NewPrinter(&out, false)
	rec := resultsfile.RunRecord{Cell: design.Cell{Strategy: "C4", Scenario: "healthy", CPU: "cpus-1"}, Run: 3, Status: resultsfile.RunFailed, Reason: "x"}
	p.RunDone(rec, 29, 40, 10*time.Second) // one run here, 10 s
	p.RunDone(rec, 30, 40, 20*time.Second) // two, 10 s each
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "(~1m50s left)") || !strings.HasSuffix(lines[1], "(~1m40s left)") {
		t.Errorf("want 11 and 10 runs of 10 s left:\n%s", out.String())
	}
}
