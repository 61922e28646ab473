package dashboard

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// longClaim is a claim longer than any table cell's line.
const longClaim = "C4 gets no write 503s under slow writes, because its records budget of four permits keeps the writes in flight " +
	"below the system of record's six workers at every moment of the run, whatever the enrichment service does meanwhile; " +
	"this sentence goes on so that no table cell can hold it on one line."

// tinyExperiment is exptest.TinySpec (two cells, three runs) with one
// paired-v3 hypothesis claiming longClaim, locked with lockedRuns runs
// per cell: a lock of other than 3 makes the experiment exploratory.
func tinyExperiment(t *testing.T, lockedRuns int) (design.Spec, []design.Hypothesis, design.Lock) {
	t.Helper()
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hyp := strings.Replace(exptest.TinyHypotheses, "hypotheses:\n", "rules: paired-v3\nhypotheses:\n", 1)
	hyp = strings.Replace(hyp, "C4 gets no write 503s under slow writes.", longClaim, 1)
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", hyp), spec)
	if err != nil {
		t.Fatal(err)
	}
	d := design.DesignOf(spec)
	d.Runs = lockedRuns
	return spec, hs, design.Lock{File: "h.yaml", Design: &d}
}

// runRecord is a valid run of u accepting rate records per lab second,
// with a short timeline of calls in flight.
func runRecord(u plan.Unit, rate float64) resultsfile.RunRecord {
	return resultsfile.RunRecord{Cell: u.Cell, Run: u.Run, Status: resultsfile.RunValid,
		Metrics: map[string]float64{"accepted_per_second": rate, "write_rejections": 0, "peak_concurrent_writes": 4},
		Client:  &records.Result{Timeline: []records.Sample{{T: 0.5, Enrichment: 3, Records: 2}, {T: 1, Enrichment: 4, Records: 4}}}}
}

// rateOf is the accepted rate the tests give run u: its cell's level
// (C2's 200, C4's 40) plus its run number.
func rateOf(u plan.Unit) float64 {
	if u.Cell.Strategy == "C2" {
		return 200 + float64(u.Run)
	}
	return 40 + float64(u.Run)
}

// The accepted-rate chart has a series per cell and a row per run number:
// a run's rate is in its cell's column only, every other cell's is no
// value (null to the browser, a break dygraphs never joins across), and a
// run not ended yet is no value too.
func TestAcceptedRateIsASeriesPerCell(t *testing.T) {
	spec, hs, lock := tinyExperiment(t, 3)
	s := New("experiment", "t")
	units := plan.Units(spec)
	p := NewExperimentProgress(s, spec, hs, lock, units, config.Default())
	ended := units[:len(units)-1] // the last cell's run 3 has not ended
	for i, u := range ended {
		p.RunDone(runRecord(u, rateOf(u)), i+1, len(units), 0)
	}
	var acc *Chart
	for _, c := range s.Snapshot().Charts {
		if c.ID == "accepted" {
			acc = c
		}
	}
	if acc == nil {
		t.Fatal("no accepted-rate chart")
	}
	cells := spec.Cells()
	if want := []string{"run", cells[0].String(), cells[1].String()}; strings.Join(acc.Labels, ",") != strings.Join(want, ",") {
		t.Fatalf("the chart's labels %q, want the x then a series per cell %q", acc.Labels, want)
	}
	if len(acc.Rows) != spec.Runs {
		t.Fatalf("%d rows, want one per run number (%d)", len(acc.Rows), spec.Runs)
	}
	for _, u := range units {
		got := acc.Rows[u.Run-1][1+cellIndex(cells, u.Cell)]
		switch {
		case u == units[len(units)-1] && !math.IsNaN(got):
			t.Errorf("%s run %d has not ended, yet its point is %v", u.Cell, u.Run, got)
		case u != units[len(units)-1] && got != rateOf(u):
			t.Errorf("%s run %d: %v in its cell's series, want %v", u.Cell, u.Run, got, rateOf(u))
		}
	}
	for k, row := range acc.Rows {
		if row[0] != float64(k+1) {
			t.Errorf("row %d's x is %v, want the run number %d", k, row[0], k+1)
		}
	}
	b, err := json.Marshal(acc)
	if err != nil || !strings.Contains(string(b), `[3,203,null]`) {
		t.Errorf("the chart as the browser gets it: %v, %s; want run 3 of the second cell as null", err, b)
	}
}

// cellIndex is c's place in cells.
func cellIndex(cells []design.Cell, c design.Cell) int {
	for i, x := range cells {
		if x == c {
			return i
		}
	}
	return -1
}

// A row's missing values go to the browser as null and come back as NaN;
// the numbers are kept exactly.
func TestRowsKeepNumbersAndGaps(t *testing.T) {
	in := Rows{{1, 2.5, math.NaN()}, {2, math.Inf(1), 1e-7}, {3, 1e21, -4}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[[1,2.5,null],[2,null,1e-07],[3,1e+21,-4]]`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var out Rows
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || !math.IsNaN(out[0][2]) || !math.IsNaN(out[1][1]) || out[0][1] != 2.5 || out[1][2] != 1e-7 || out[2][1] != 1e21 {
		t.Errorf("read back as %v", out)
	}
	if b, _ := json.Marshal(Rows(nil)); string(b) != "null" {
		t.Errorf("no rows: %s", b)
	}
}

// Every chart of every kind of work labels both axes in words with their
// unit, names every series, and says the unit of its values; the time
// axes say lab or model seconds in words, never "lab s".
func TestEveryChartSaysItsUnits(t *testing.T) {
	spec, hs, lock := tinyExperiment(t, 3)
	exp := New("experiment", "t")
	units := plan.Units(spec)
	p := NewExperimentProgress(exp, spec, hs, lock, units, config.Default())
	for i, u := range units {
		p.RunDone(runRecord(u, rateOf(u)), i+1, len(units), 0)
	}
	run := New("run", "t")
	run.Update(func(st *State) {
		m := runMetrics{inFlight: map[string]float64{"enrichment": 2, "records": 3}, limit: map[string]float64{},
			waiting: map[string]float64{"records": 1}, calls: map[string]float64{"records ok": 10}}
		chartRecordRun(st, m, map[string]float64{}, Budgets{"records": 4}, []string{"enrichment", "records"}, "records", 1, 1, 5)
	})
	load := New("load", "t")
	load.LoadProgress(nil)(loadgen.Progress{Elapsed: 1, Duration: 10, Sent: 5, Replies: map[loadgen.Reply]int{loadgen.ReplyOnTime: 5},
		Latency: loadgen.Latency{Count: 5, P50: 0.01, P90: 0.02, P99: 0.03, Max: 0.04}})
	for kind, s := range map[string]*Server{"experiment": exp, "run": run, "load": load} {
		st := s.Snapshot()
		if len(st.Charts) < 2 {
			t.Errorf("%s: %d charts", kind, len(st.Charts))
		}
		for _, c := range st.Charts {
			if len(strings.Fields(c.XLabel)) < 2 || len(strings.Fields(c.YLabel)) < 2 || c.YUnit == "" || c.Title == "" {
				t.Errorf("%s chart %s: x %q, y %q, unit %q, title %q: each must say what it is in words", kind, c.ID, c.XLabel, c.YLabel, c.YUnit, c.Title)
			}
			for _, l := range []string{c.XLabel, c.YLabel, c.YUnit, c.Title, c.Labels[0]} {
				if strings.Contains(l, "lab s") && !strings.Contains(l, "lab second") || strings.Contains(l, "model s") && !strings.Contains(l, "model second") {
					t.Errorf("%s chart %s: %q abbreviates its unit", kind, c.ID, l)
				}
			}
			if c.ID != "accepted" || kind != "experiment" {
				if !strings.Contains(c.XLabel, "seconds since") {
					t.Errorf("%s chart %s: its time axis is %q, not seconds since the start", kind, c.ID, c.XLabel)
				}
			}
			for i, l := range c.Labels {
				if strings.TrimSpace(l) == "" {
					t.Errorf("%s chart %s: series %d has no name", kind, c.ID, i)
				}
			}
			for _, r := range c.Rows {
				if len(r) != len(c.Labels) {
					t.Errorf("%s chart %s: a row of %d values under %d labels", kind, c.ID, len(r), len(c.Labels))
				}
			}
		}
	}
}

// A resumed experiment's time left is taken at the pace of the runs this
// process ran, not of those it took from the run log.
func TestTimeLeftOfAResumedExperiment(t *testing.T) {
	spec, hs, lock := tinyExperiment(t, 3)
	s := New("experiment", "t")
	units := plan.Units(spec) // 6 runs; say 4 came from the log
	p := NewExperimentProgress(s, spec, hs, lock, units, config.Default())
	p.RunDone(runRecord(units[4], rateOf(units[4])), 5, len(units), 10*time.Second)
	if got := s.Snapshot().Experiment.TimeLeft; got != "about 10s left" {
		t.Errorf("after 1 run of 10 s, 1 to go: %q, want about 10s left", got)
	}
}

// An experiment on one's own services draws the calls in flight of its own
// pipeline's dependencies, and the run's budgets of them dashed.
func TestCallsInFlightOfOwnServices(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", exptest.OwnSpec))
	if err != nil {
		t.Fatal(err)
	}
	s := New("experiment", "t")
	units := plan.Units(spec)
	p := NewExperimentProgress(s, spec, nil, design.Lock{}, units, config.Default())
	rec := runRecord(units[0], 10)
	rec.Client.Timeline = []records.Sample{{T: 0.5, Calls: map[string]int{"stock": 5, "orders": 3}}}
	rec.Client.Params.Permits = map[string]int{"orders": 3}
	p.RunDone(rec, 1, len(units), 0)
	for _, c := range s.Snapshot().Charts {
		if c.ID != "inflight" {
			continue
		}
		if got := strings.Join(c.Labels, ","); got != "lab seconds,stock,orders,orders budget" || len(c.Rows) != 1 || c.Rows[0][1] != 5 || c.Rows[0][2] != 3 || c.Rows[0][3] != 3 {
			t.Errorf("labels %s, rows %v", got, c.Rows)
		}
		return
	}
	t.Fatal("no calls-in-flight chart")
}
