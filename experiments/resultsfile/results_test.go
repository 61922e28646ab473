package resultsfile_test

import (
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Results written before runs kept their kind of CPU limit are read with
// it, from its description.
func TestReadResultsGivesEveryRunItsLimitKind(t *testing.T) {
	res, err := resultsfile.ReadResults("../results/conditions-v1/results.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.MechanismKind == "" || r.MechanismKind != cpulimit.KindOf(r.Mechanism) {
			t.Fatalf("run %d of %s: kind %q from %q", r.Run, r.Cell, r.MechanismKind, r.Mechanism)
		}
	}
}

// Results of the first format, written before run statuses and before
// cells counted their valid runs, are read in the current shape: a run
// that said it failed is failed, with its reason; every other is valid;
// each cell counts its valid runs.
func TestNormalizeResultsOfTheFirstFormat(t *testing.T) {
	c := design.Cell{Strategy: "C1", Scenario: "healthy", CPU: "cpus-1"}
	path := filepath.Join(t.TempDir(), "results.json")
	old := resultsfile.Results{
		Runs:  []resultsfile.RunRecord{{Cell: c, Run: 1}, {Cell: c, Run: 2, Failed: "the child exited 2"}, {Cell: c, Run: 3}},
		Cells: []resultsfile.CellSummary{{Cell: c, Runs: 3}},
	}
	if err := resultsfile.WriteJSON(path, old); err != nil {
		t.Fatal(err)
	}
	res, err := resultsfile.ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[1]; r.Status != resultsfile.RunFailed || r.Reason != "the child exited 2" {
		t.Errorf("run 2: %q, %q; want failed, with its reason", r.Status, r.Reason)
	}
	if !res.Runs[0].Valid() || !res.Runs[2].Valid() {
		t.Errorf("runs 1 and 3: %q and %q, want valid", res.Runs[0].Status, res.Runs[2].Status)
	}
	if s, ok := res.Summary(c); !ok || s.Valid != 2 {
		t.Errorf("cell %s: %d valid runs (found %v), want 2", c, s.Valid, ok)
	}
}
