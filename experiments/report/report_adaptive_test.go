package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// adaptiveResults is an experiment of three strategies (C4; C5-vegas, with
// adaptive limits; C6, with retries) on the built-in write-capacity-drop
// and on healthy, three runs per cell, with made-up figures: run 1 of each
// C5-vegas cell keeps a timeline of its limits (records: 8, down to 3
// during the drop; enrichment: 20 + a tenth of the lab second), and run k
// of C5-vegas amplifies records by 1 + k/100, of C6 by 1.1 + k/100.
func adaptiveResults(t *testing.T) *resultsfile.Results {
	t.Helper()
	sp := design.Spec{Name: "adaptive-report", Records: 100000, Runs: 3, TimeScale: 0.2, CallTimeout: 2 * time.Second,
		PermitTimeout: 10 * time.Second, Seed: 1, Strategies: []string{"C4", "C5-vegas", "C6"},
		Scenarios: []string{phases.WriteCapacityDrop, config.ProfileHealthy}, CPUs: []design.CPUSetting{{Name: "cpus-1", CPUs: 1}}, Duration: 40 * time.Second}
	var runs []resultsfile.RunRecord
	for _, c := range sp.Cells() {
		for k := 1; k <= sp.Runs; k++ {
			res := &records.Result{Records: 1000, AcceptedPerLabSecond: 25}
			if c.Strategy == "C5-vegas" && k == 1 {
				for i := range 410 { // a sample every 0.1 lab s, to 41 s: a drain after the phases
					tt := float64(i) / 10
					lim := 8
					if c.Scenario == phases.WriteCapacityDrop && tt >= 12 && tt < 31 {
						lim = 3
					}
					res.Timeline = append(res.Timeline, records.Sample{T: tt, Records: lim,
						Limits: map[string]int{records.Records: lim, records.Enrichment: 20 + i/10}})
				}
			}
			m := judge.MetricsOf(*res, api.Stats{}, sp.TimeScale)
			switch c.Strategy {
			case "C5-vegas":
				m["records_limit_median"], m["records_limit_min"], m["records_limit_last"] = 8, float64(2+k), 8
				m["enrichment_limit_median"], m["enrichment_limit_min"], m["enrichment_limit_last"] = 40, 20, 60
				m["records_amplification"], m["enrichment_amplification"] = 1+float64(k)/100, 1
				m["records_retries"], m["records_retries_denied"] = 0, 0
			case "C6":
				m["records_amplification"], m["enrichment_amplification"] = 1.1+float64(k)/100, 1.02
				m["records_retries"], m["records_retries_denied"] = float64(100+k), float64(10*k)
			}
			runs = append(runs, resultsfile.RunRecord{Cell: c, Run: k, Seed: sp.Seed + uint32(k), Status: resultsfile.RunValid, Client: res, Metrics: m})
		}
	}
	return &resultsfile.Results{Experiment: sp, Runs: runs, Cells: judge.Summaries(sp, runs, config.Default(), nil)}
}

// The Markdown report has a table of the adaptive limits and retries after
// the phased section: a row per cell that has them, units in the headers.
func TestAdaptiveReportMarkdown(t *testing.T) {
	var md bytes.Buffer
	WriteMarkdown(&md, adaptiveResults(t))
	s := md.String()
	if p, a, v := strings.Index(s, "## Phased scenarios"), strings.Index(s, "## Adaptive limits and retries"), strings.Index(s, "## Verdicts"); !(p < a && a < v) {
		t.Fatalf("the adaptive section is not between the phased section and the verdicts:\n%s", s)
	}
	sec := section(t, s, "## Adaptive limits and retries", "## Verdicts")
	for _, want := range []string{
		"| cell | records limit, median (calls in flight) | records limit, min (calls in flight) | enrichment limit, median (calls in flight) " +
			"| records amplification (requests per first attempt, ×) | enrichment amplification (requests per first attempt, ×) " +
			"| records retries (per run) | records retries denied (per run) |",
		"| C5-vegas/write-capacity-drop/cpus-1 | 8.0 | 4.0 (3.0–5.0) | 40.0 | 1.02 (1.01–1.03) | 1.00 | 0 | 0 |",
		"| C6/healthy/cpus-1 | — | — | — | 1.12 (1.11–1.13) | 1.02 | 102 (101–103) | 20 (10–30) |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("no %q in\n%s", want, sec)
		}
	}
	if strings.Contains(sec, "| C4/") {
		t.Errorf("a row for C4, which has neither adaptive limits nor retries:\n%s", sec)
	}
}

// The HTML report has the same table and, per scenario, the adaptive
// limits over run 1 (the records' against the system of record's
// capacity, the phases marked), then the amplification per strategy.
func TestAdaptiveReportHTML(t *testing.T) {
	var page bytes.Buffer
	if err := WriteHTML(&page, adaptiveResults(t)); err != nil {
		t.Fatal(err)
	}
	s := section(t, page.String(), "<h2>Adaptive limits and retries</h2>", "<h2>More charts</h2>")
	if n := strings.Count(s, "<svg"); n != 3 {
		t.Errorf("%d charts in the adaptive section, want the limits per scenario (2) and the amplification", n)
	}
	for _, want := range []string{
		"<th>records limit, median (calls in flight)</th>", "<td>C5-vegas/healthy/cpus-1</td>",
		"Adaptive limit of records calls over run 1, write-capacity-drop", "Adaptive limit of enrichment calls over run 1, write-capacity-drop",
		"Adaptive limit of records calls over run 1, healthy",
		"lab seconds", "limit (calls in flight)", "workers (system of record)", "workers + queue slots", ">drop<", ">drain<",
		"Offered load amplification at records, cpus-1", "Offered load amplification at enrichment, cpus-1",
		"requests the server saw per first attempt (×)", "1×: no retries",
		"write-capacity-drop: each adaptive strategy&#39;s concurrency limit (records, top; enrichment, bottom) over run 1",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the adaptive section", want)
		}
	}
	// The limits are C5-vegas's alone: C6 has no adaptive limit.
	limits := section(t, s, "Adaptive limit of records calls over run 1, write-capacity-drop", "Offered load amplification")
	if strings.Contains(limits, ">C6<") || !strings.Contains(limits, ">C5-vegas<") {
		t.Error("the limits charts' legends should name C5-vegas and not C6")
	}
}

// Results without adaptive limits or retries have neither the table nor
// the charts.
func TestAdaptiveReportAbsent(t *testing.T) {
	res := phasedResults(t)
	var md, page bytes.Buffer
	WriteMarkdown(&md, res)
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{md.String(), page.String()} {
		for _, unwanted := range []string{"Adaptive limits and retries", "Adaptive limit of", "Offered load amplification"} {
			if strings.Contains(out, unwanted) {
				t.Errorf("%q in a report of results without adaptive limits or retries", unwanted)
			}
		}
	}
}
