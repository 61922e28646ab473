package charts

import (
	"testing"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// perSecondResults is three valid runs of C1 on write-capacity-drop, each
// second counted: 30 accepted and no rejection a lab second, but in the
// drop (10–30 lab s), where run k accepts 8+k and gets 42 write 503s; runs
// 1 and 2 end a lab second after the phases, with 5 more records.
func perSecondResults() *resultsfile.Results {
	c := design.Cell{Strategy: "C1", Scenario: phases.WriteCapacityDrop, CPU: "cpus-1"}
	r := &resultsfile.Results{}
	for k := 1; k <= 3; k++ {
		res := &records.Result{}
		for s := range 40 {
			sc := records.SecondCounts{T: s, Accepted: 30}
			if s >= 10 && s < 30 {
				sc.Accepted, sc.WriteRejections = 8+k, 42
			}
			res.PerSecond = append(res.PerSecond, sc)
		}
		if k < 3 {
			res.PerSecond = append(res.PerSecond, records.SecondCounts{T: 40, Accepted: 5, Ended: 5})
		}
		r.Runs = append(r.Runs, resultsfile.RunRecord{Cell: c, Run: k, Status: resultsfile.RunValid, Client: res})
	}
	return r
}

// The median per lab second counts 0 for a run that had ended.
func TestPhasedMedianPerSecond(t *testing.T) {
	res := perSecondResults()
	s, ok := medianPerSecond(res, design.Cell{Strategy: "C1", Scenario: phases.WriteCapacityDrop, CPU: "cpus-1"})
	if !ok || s.runs != 3 || len(s.accepted) != 41 {
		t.Fatalf("%v %d runs, %d seconds; want 3 runs, 41 seconds", ok, s.runs, len(s.accepted))
	}
	if got := s.accepted[40]; got.X != 40.5 || got.Y != 5 { // 5, 5 and 0 (run 3 had ended)
		t.Errorf("second 40: %v, want (40.5, 5)", got)
	}
	if got := s.accepted[15].Y; got != 10 {
		t.Errorf("second 15 (drop): %v accepted, want the median 10", got)
	}
	if got := s.rejected[15].Y; got != 42 {
		t.Errorf("second 15 (drop): %v rejections, want 42", got)
	}
}
