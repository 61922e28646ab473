package dashboard

import (
	"strconv"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// An experiment that is not the design its hypotheses were locked with
// says so from the start, with the reason the command prints; one that is
// says nothing; at the end the results' verdicts say which.
func TestTheStateSaysWhenVerdictsAreExploratory(t *testing.T) {
	spec, hs, lock := tinyExperiment(t, 5)
	s := New("experiment", "t")
	p := NewExperimentProgress(s, spec, hs, lock, plan.Units(spec), config.Default())
	want := design.Experiment{Spec: spec, Hypotheses: hs, Lock: lock}.Exploratory()
	if want == "" || !strings.Contains(want, "runs 3, locked 5") {
		t.Fatalf("the test's experiment is not exploratory as it means to be: %q", want)
	}
	if got := s.Snapshot().Experiment.Exploratory; got != want {
		t.Errorf("exploratory %q, want the command's reason %q", got, want)
	}
	p.Final(&resultsfile.Results{Verdicts: []resultsfile.Verdict{{ID: "T1", Verdict: resultsfile.Supported, Exploratory: "not the preregistered design: records 1, locked 30"}}})
	ex := s.Snapshot().Experiment
	if ex.Exploratory != "not the preregistered design: records 1, locked 30" || !strings.HasPrefix(ex.Verdicts[0].Label, "exploratory") {
		t.Errorf("after the results: exploratory %q, verdict label %q; want the results' reason", ex.Exploratory, ex.Verdicts[0].Label)
	}
	p.Final(&resultsfile.Results{Verdicts: []resultsfile.Verdict{{ID: "T1", Verdict: resultsfile.Supported}}})
	if got := s.Snapshot().Experiment.Exploratory; got != "" {
		t.Errorf("results whose verdicts are findings still read exploratory: %q", got)
	}

	spec, hs, lock = tinyExperiment(t, 3)
	s = New("experiment", "t")
	NewExperimentProgress(s, spec, hs, lock, plan.Units(spec), config.Default())
	if got := s.Snapshot().Experiment.Exploratory; got != "" {
		t.Errorf("the preregistered design reads exploratory: %q", got)
	}
}

// Claims reach the page whole, and a cell's median is a number whose unit
// the page's column gives in words.
func TestClaimsAreWholeAndMediansAreNumbers(t *testing.T) {
	spec, hs, lock := tinyExperiment(t, 3)
	s := New("experiment", "t")
	units := plan.Units(spec)
	p := NewExperimentProgress(s, spec, hs, lock, units, config.Default())
	for i, u := range units {
		p.RunDone(runRecord(u, rateOf(u)), i+1, len(units), 0)
	}
	ex := s.Snapshot().Experiment
	if ex.Verdicts[0].Claim != longClaim {
		t.Errorf("claim %q, want it whole", ex.Verdicts[0].Claim)
	}
	for _, c := range ex.Cells {
		if _, err := strconv.ParseFloat(c.Median, 64); err != nil {
			t.Errorf("%s: median %q is not a number", c.Cell, c.Median)
		}
	}
}

// Each page says what its time unit is: a lab second (real seconds ÷ the
// time scale) for an experiment and a record run, a model second for a
// load.
func TestThePageSaysWhatALabSecondIs(t *testing.T) {
	for kind, want := range map[string]string{"experiment": "A lab second is a second of the lab's timeline: real seconds ÷ the time scale",
		"run": "A lab second is", "load": "A model second is a second of the load's model: real seconds ÷ the time scale"} {
		if got := New(kind, "t").Snapshot().TimeUnit; !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
}
