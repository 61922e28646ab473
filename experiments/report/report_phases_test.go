package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// phasedResults is an experiment of two phased scenarios (the built-in
// write-capacity-drop and one of its own with faults and a restart), two
// strategies and three runs per cell, with made-up per-phase figures: in
// run k the drop phase accepts 8+k records per lab second (C1) or 20+k
// (C4).
func phasedResults(t *testing.T) *resultsfile.Results {
	t.Helper()
	sp := design.Spec{Name: "phased-report", Records: 100000, Runs: 3, TimeScale: 0.2, CallTimeout: 2 * time.Second,
		PermitTimeout: 10 * time.Second, Seed: 1, Strategies: []string{"C1", "C4"},
		Scenarios: []string{phases.WriteCapacityDrop, "flaky"}, CPUs: []design.CPUSetting{{Name: "cpus-1", CPUs: 1}}, Duration: 40 * time.Second,
		PhasedScenarios: map[string]phases.PhasedScenario{"flaky": {Profile: config.ProfileHealthy, Phases: []phases.Phase{
			{Name: "calm", Duration: 10 * time.Second},
			{Name: "faulty", Duration: 20 * time.Second, Faults: []faults.Fault{
				{Dependency: api.Records, Kind: faults.Reset, After: 500 * time.Millisecond, Probability: 0.3},
				{Dependency: api.Enrichment, Kind: faults.Latency, Latency: 200 * time.Millisecond, Jitter: 50 * time.Millisecond},
			}, Restart: &phases.Restart{After: 5 * time.Second, Signal: phases.SignalKill}},
			{Name: "calm-again", Duration: 10 * time.Second},
		}}}}
	var runs []resultsfile.RunRecord
	for _, c := range sp.Cells() {
		ps, _ := sp.Phased(c.Scenario)
		low := 8.0
		if c.Strategy == "C4" {
			low = 20
		}
		for k := 1; k <= sp.Runs; k++ {
			res := &records.Result{Records: 1000}
			for i, ph := range ps.Phases {
				rate, rej := 30.0, 0
				if i == 1 {
					rate, rej = low+float64(k), 50-int(low)
				}
				d := ph.Duration.Seconds()
				res.Phases = append(res.Phases, records.PhaseResult{Name: ph.Name, Start: ps.Start(i).Seconds(), End: ps.Start(i + 1).Seconds(),
					Accepted: int(rate * d), AcceptedPerLabSecond: rate, WriteRejections: rej * int(d), PeakConcurrentWrites: 10 + i,
					States:    map[records.State]int{records.Complete: int(rate * d), records.Incomplete: i, records.WriteUnknown: k - 1},
					LatencyMs: records.Percentiles{P50: 400 + 100*float64(i), P95: 900, P99: 1200 + 100*float64(k), Max: 2000}})
				for range int(d) {
					res.PerSecond = append(res.PerSecond, records.SecondCounts{T: len(res.PerSecond), Accepted: int(rate), WriteRejections: rej})
				}
			}
			if c.Strategy == "C1" && k < 3 { // records that ended after the phases, in two runs of three
				res.Phases = append(res.Phases, records.PhaseResult{Name: records.DrainPhase, Start: 40, End: 41 + float64(k),
					Ended: 5, Accepted: 5, AcceptedPerLabSecond: 5 / (1 + float64(k)), States: map[records.State]int{records.Complete: 5}})
				res.PerSecond = append(res.PerSecond, records.SecondCounts{T: 40, Accepted: 5, Ended: 5})
			}
			run := resultsfile.RunRecord{Cell: c, Run: k, Seed: sp.Seed + uint32(k), Status: resultsfile.RunValid, Client: res,
				Metrics: judge.MetricsOf(*res, api.Stats{}, sp.TimeScale)}
			if k == 1 {
				for i, ph := range ps.Phases[1:] {
					at := ps.Start(i + 1).Seconds()
					action := resultsfile.ActionSet
					if c.Scenario == "flaky" {
						action = resultsfile.ActionFaults
					}
					run.PhaseEvents = append(run.PhaseEvents, resultsfile.PhaseEvent{Phase: ph.Name, Action: action, Scheduled: at, At: at + 0.01, Done: at + 0.03})
				}
				if c == (design.Cell{Strategy: "C4", Scenario: "flaky", CPU: "cpus-1"}) {
					run.PhaseEvents = append(run.PhaseEvents, resultsfile.PhaseEvent{Phase: "faulty", Action: resultsfile.ActionRestartKill, Scheduled: 15, At: 15.02, Done: 15.02,
						Err: "the runner cannot restart this mock service"})
					run.Status, run.Reason = resultsfile.RunFailed, run.PhaseTrouble()
				}
			}
			runs = append(runs, run)
		}
	}
	return &resultsfile.Results{Experiment: sp, Runs: runs, Cells: judge.Summaries(sp, runs, config.Default(), nil)}
}

// section is the text of s from the heading from up to the next heading
// to (the end when there is none).
func section(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("no %q in\n%s", from, s)
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}

// The Markdown report of a phased experiment has a section after the cells
// table: per scenario what each phase changes (settings, faults,
// restarts), a row per strategy and phase with units, drain included, and
// the runner's changes in run 1.
func TestPhasedScenariosReportMarkdown(t *testing.T) {
	var md bytes.Buffer
	WriteMarkdown(&md, phasedResults(t))
	s := md.String()
	if c, p, v := strings.Index(s, "## Every cell"), strings.Index(s, "## Phased scenarios"), strings.Index(s, "## Verdicts"); !(c < p && p < v) {
		t.Fatalf("the phased section is not between the cells table and the verdicts:\n%s", s)
	}
	drop := section(t, s, "### write-capacity-drop", "### flaky")
	flaky := section(t, s, "### flaky", "## Verdicts")
	for _, want := range []string{
		"40 lab s from profile healthy, in 3 phases:",
		"- **before** (0–10 lab s): no change\n",
		"- **drop** (10–30 lab s): set `{\"records\":{\"queue\":2,\"workers\":2}}`\n",
		fmt.Sprintf("- **after** (30–40 lab s): set `{\"records\":{\"queue\":%d,\"workers\":%d}}`\n", config.Default().Records.Queue, config.Default().Records.Workers),
		"| strategy | phase | lab s | accepted/s (lab) | write 503s | peak writes in flight (client) | record latency p50 (lab ms) | record latency p99 (lab ms) | incomplete | write unknown | failed |",
		"| C1 | before | 0–10 | 30.00 | 0 | 10 | 400 | 1400 | 0 | 1 (0–2) | 0 |",
		"| C1 | drop | 10–30 | 10.00 (9.00–11.00) | 840 | 11 | 500 | 1400 | 1 | 1 (0–2) | 0 |",
		"| C4 | drop | 10–30 | 22.00 (21.00–23.00) | 600 | 11 |",
		"| C1 | drain (2 of 3 runs) | 40–42.5 | 2.08 (1.67–2.50) | 0 |",
		"| C1 | 1 | drop | set | 10.00 | 10.01 | 10.03 | none |",
		"| C4 | 1 | after | set | 30.00 | 30.01 | 30.03 | none |",
	} {
		if !strings.Contains(drop, want) {
			t.Errorf("write-capacity-drop: no %q in\n%s", want, drop)
		}
	}
	if strings.Contains(drop, "| C4 | drain") {
		t.Errorf("a drain row for C4, whose runs had none:\n%s", drop)
	}
	for _, want := range []string{
		"- **calm** (0–10 lab s): no faults\n",
		"- **faulty** (10–30 lab s): faults: reset on records (after 500ms, 30% of connections), latency 200ms ± 50ms on enrichment; restart KILL after 5s\n",
		"- **calm-again** (30–40 lab s): no faults\n",
		"| C4 | faulty | 10–30 | 22.50 (22.00–23.00) |", // run 1 failed: runs 2 and 3
		"| C1 | 1 | faulty | faults | 10.00 | 10.01 | 10.03 | none |",
		"| C4 | 1 (failed) | faulty | restart KILL | 15.00 | 15.02 | 15.02 | the runner cannot restart this mock service |",
	} {
		if !strings.Contains(flaky, want) {
			t.Errorf("flaky: no %q in\n%s", want, flaky)
		}
	}
}

// An experiment without phased scenarios has no such section.
func TestPhasedScenariosReportAbsent(t *testing.T) {
	res := phasedResults(t)
	res.Experiment.Scenarios, res.Experiment.PhasedScenarios, res.Experiment.Duration = []string{config.ProfileHealthy}, nil, 0
	res.Runs, res.Cells = nil, nil
	var md, page bytes.Buffer
	WriteMarkdown(&md, res)
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Phased scenarios") || strings.Contains(page.String(), "Phased scenarios") {
		t.Error("a phased section without phased scenarios")
	}
}

// The HTML report has the same tables and a chart per phased scenario:
// accepted records and write 503s per lab second, the phases marked.
func TestPhasedScenariosReportHTML(t *testing.T) {
	var page bytes.Buffer
	if err := WriteHTML(&page, phasedResults(t)); err != nil {
		t.Fatal(err)
	}
	s := section(t, page.String(), "<h2>Phased scenarios</h2>", "<h2>More charts</h2>")
	if n := strings.Count(s, "<svg"); n != 2 {
		t.Errorf("%d charts in the phased section, want one per phased scenario", n)
	}
	if n := strings.Count(s, "<table>"); n != 4 {
		t.Errorf("%d tables in the phased section, want the phases' and the events' per scenario", n)
	}
	for _, want := range []string{
		"<h3>write-capacity-drop</h3>", "<h3>flaky</h3>",
		"<li><b>drop</b> (10–30 lab s): set <code>{&#34;records&#34;:{&#34;queue&#34;:2,&#34;workers&#34;:2}}</code></li>",
		"latency 200ms ± 50ms on enrichment; restart KILL after 5s</li>",
		"<th>accepted/s (lab)</th>", "<td>drain (2 of 3 runs)</td>",
		"lab seconds since start", "records accepted per lab second", "write 503s per lab second",
		">drop<", ">faulty<", ">drain<", ">restart KILL<", "C1 (3 runs)", "C4 (2 runs)",
		"median of each second over the strategy&#39;s valid runs",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the phased section", want)
		}
	}
}
