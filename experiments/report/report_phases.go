package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// phasedIntro says what the phased scenarios' tables show.
const phasedIntro = "A phased scenario changes the mock service during each run: every run lasts the scenario's phases in lab time, " +
	"and at each phase's start the runner applies its settings (on top of those in force; the first phase's before the run starts), " +
	"replaces the network faults between the client and each dependency (durations in lab time) and restarts the mock service " +
	"when the phase says so. Per strategy and phase, median (minimum–maximum) over the cell's valid runs; an event (a record's " +
	"end, a write's answer) counts in the phase holding the lab time it happened at; \"drain\" holds the records still in " +
	"progress when the last phase ended. Peak writes in flight are counted at the client (calls to the system of record at once, " +
	"rejected ones included), and record latency is from a record's beginning to its end in lab milliseconds: both the median " +
	"over runs of each run's figure."

// phasedEventsIntro says what the phase events table shows.
const phasedEventsIntro = "What the runner changed, and when, in run 1 of each strategy: lab seconds from the run's start, " +
	"scheduled, begun and taken effect (for a restart: the mock service answering again with the phase's settings)."

// phasedReport is the phased scenarios' section: one part per phased
// scenario and CPU setting.
type phasedReport struct {
	Intro, EventsIntro string
	Sections           []phasedSection
}

// phasedSection is one phased scenario on one CPU setting.
type phasedSection struct {
	Title   string // the scenario, and the CPU setting when there are several
	Summary string // its length and starting profile
	Lines   []phaseLine
	Table   table // strategy × phase
	Events  table // the runner's changes in run 1 of each strategy
	// Figures are the HTML report's charts (WriteHTML draws them).
	Figures []htmlFigure
	cpu     string
	scen    string
}

// phaseLine is what one phase changes: Set is its settings as compact
// JSON; Other its faults and restart, or "no change".
type phaseLine struct {
	Name, Span, Set, Other string
}

// phasedReportOf builds the section, empty when no scenario is phased.
func phasedReportOf(r *resultsfile.Results) phasedReport {
	sp := r.Experiment
	rep := phasedReport{Intro: phasedIntro, EventsIntro: phasedEventsIntro}
	if sp.Own != nil {
		rep.Intro = ownPhasedIntro
	}
	for _, sc := range sp.Scenarios {
		ps, ok := sp.Phased(sc)
		if !ok {
			continue
		}
		for _, cpu := range sp.CPUs {
			sec := phasedSection{Title: sc, cpu: cpu.Name, scen: sc, Lines: phaseLines(ps),
				Summary: fmt.Sprintf("%s lab s from profile %s, in %d phases:", secs(ps.Total()), ps.Profile, len(ps.Phases))}
			if sp.Own != nil {
				sec.Lines = ownPhaseLines(sp, sc, sec.Lines)
				sec.Summary = fmt.Sprintf("%s lab s from the copies %s, in %d phases:", secs(ps.Total()), design.AsProbed, len(ps.Phases))
			}
			if len(sp.CPUs) > 1 {
				sec.Title += ", " + cpu.Name
			}
			sec.Table = phaseTable(r, ps, sc, cpu.Name)
			sec.Events = phaseEventsTable(r, sc, cpu.Name)
			if len(sec.Table.Rows) == 0 && len(sp.CPUs) > 1 {
				continue // a CPU setting without this scenario's cells
			}
			rep.Sections = append(rep.Sections, sec)
		}
	}
	return rep
}

// secs prints a lab duration in seconds.
func secs(d time.Duration) string { return fmt.Sprintf("%g", d.Seconds()) }

// phaseLines describes each phase: its span and what it changes.
func phaseLines(ps phases.PhasedScenario) []phaseLine {
	var out []phaseLine
	for i, ph := range ps.Phases {
		l := phaseLine{Name: ph.Name, Span: fmt.Sprintf("%s–%s lab s", secs(ps.Start(i)), secs(ps.Start(i+1)))}
		if len(ph.Set) > 0 {
			if b, err := json.Marshal(ph.Set); err == nil {
				l.Set = string(b)
			} else {
				l.Set = fmt.Sprint(ph.Set)
			}
		}
		var other []string
		if len(ph.Faults) > 0 {
			var fs []string
			for _, f := range ph.Faults {
				fs = append(fs, describeFault(f))
			}
			other = append(other, "faults: "+strings.Join(fs, ", "))
		} else if ps.HasFaults() {
			other = append(other, "no faults")
		}
		if rs := ph.Restart; rs != nil {
			other = append(other, fmt.Sprintf("restart %s after %v", rs.Signal, rs.After))
		}
		l.Other = strings.Join(other, "; ")
		if l.Set == "" && l.Other == "" {
			l.Other = "no change"
		}
		out = append(out, l)
	}
	return out
}

// describeFault is a fault as the report states it: "latency 200ms ±
// 50ms on enrichment", "reset on records (after 500ms, 30% of
// connections)".
func describeFault(f faults.Fault) string {
	s := string(f.Kind)
	switch f.Kind {
	case faults.Latency:
		s += " " + f.Latency.String()
		if f.Jitter > 0 {
			s += " ± " + f.Jitter.String()
		}
	case faults.Bandwidth:
		s += fmt.Sprintf(" %d KB/s", f.RateKBps)
	}
	s += " on " + f.Dependency
	var opts []string
	if f.After > 0 {
		opts = append(opts, "after "+f.After.String())
	}
	if f.Probability > 0 && f.Probability < 1 {
		opts = append(opts, fmt.Sprintf("%g%% of connections", 100*f.Probability))
	}
	if f.Direction == faults.Upstream {
		opts = append(opts, "upstream: the requests")
	}
	if len(opts) > 0 {
		s += " (" + strings.Join(opts, ", ") + ")"
	}
	return s
}

// phaseTable is the per-phase figures of a phased scenario's cells on one
// CPU setting: a row per strategy and phase, drain included when a run
// had one.
func phaseTable(r *resultsfile.Results, ps phases.PhasedScenario, sc, cpu string) table {
	t := table{Head: []string{"strategy", "phase", "lab s", "accepted/s (lab)", "write 503s", "peak writes in flight (client)",
		"record latency p50 (lab ms)", "record latency p99 (lab ms)", "incomplete", "write unknown", "failed"}}
	if r.Experiment.Own != nil {
		t.Head[4] = "write refusals"
	}
	for _, st := range r.Experiment.Strategies {
		c := design.Cell{Strategy: st, Scenario: sc, CPU: cpu}
		cs, ok := r.Summary(c)
		if !ok {
			continue
		}
		for i, ph := range ps.Phases {
			span := fmt.Sprintf("%s–%s", secs(ps.Start(i)), secs(ps.Start(i+1)))
			t.Rows = append(t.Rows, phaseRow(cs, st, ph.Name, ph.Name, span))
		}
		if d, ok := cs.Stats[design.PhaseKey(records.DrainPhase, "ended")]; ok && d.N > 0 {
			name := records.DrainPhase
			if d.N < cs.Valid {
				name += fmt.Sprintf(" (%d of %d runs)", d.N, cs.Valid)
			}
			t.Rows = append(t.Rows, phaseRow(cs, st, records.DrainPhase, name, drainSpan(r, c, ps)))
		}
	}
	return t
}

// phaseRow is one strategy's figures in one phase, labelled name.
func phaseRow(cs resultsfile.CellSummary, st, phase, name, span string) []string {
	g := func(m string, d int) string { s, ok := cs.Stats[design.PhaseKey(phase, m)]; return fmtStat(s, ok, d) }
	med := func(m string) string {
		s, ok := cs.Stats[design.PhaseKey(phase, m)]
		if !ok || s.N == 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f", s.Median)
	}
	return []string{st, name, span, g("accepted_per_second", 2), g("write_rejections", 0), med("peak_writes_in_flight"),
		med("record_latency_p50_ms"), med("record_latency_p99_ms"), g("incomplete", 0), g("write_unknown", 0), g("failed", 0)}
}

// drainSpan is the drain phase's lab seconds: from the phases' end to the
// median over valid runs of the last record's end.
func drainSpan(r *resultsfile.Results, c design.Cell, ps phases.PhasedScenario) string {
	var ends []float64
	for _, run := range r.Runs {
		if run.Cell != c || !run.Valid() || run.Client == nil {
			continue
		}
		for _, ph := range run.Client.Phases {
			if ph.Name == records.DrainPhase {
				ends = append(ends, ph.End)
			}
		}
	}
	if len(ends) == 0 {
		return secs(ps.Total()) + "–"
	}
	return fmt.Sprintf("%s–%.1f", secs(ps.Total()), judge.Summarize(ends).Median)
}

// phaseEventsTable is the runner's changes in run 1 of each strategy (the
// cell's first run when it has no run 1).
func phaseEventsTable(r *resultsfile.Results, sc, cpu string) table {
	t := table{Head: []string{"strategy", "run", "phase", "action", "scheduled (lab s)", "begun (lab s)", "took effect (lab s)", "error or note"}}
	for _, st := range r.Experiment.Strategies {
		c := design.Cell{Strategy: st, Scenario: sc, CPU: cpu}
		i := slices.IndexFunc(r.Runs, func(run resultsfile.RunRecord) bool { return run.Cell == c && run.Run == 1 })
		if i < 0 {
			i = slices.IndexFunc(r.Runs, func(run resultsfile.RunRecord) bool { return run.Cell == c })
		}
		if i < 0 {
			continue
		}
		run := r.Runs[i]
		label := fmt.Sprint(run.Run)
		if !run.Valid() {
			label += " (" + string(run.Status) + ")"
		}
		if len(run.PhaseEvents) == 0 {
			t.Rows = append(t.Rows, []string{st, label, "—", "none recorded", "", "", "", ""})
		}
		for _, ev := range run.PhaseEvents {
			errText := ev.Err
			switch {
			case errText == "" && ev.Note != "":
				errText = ev.Note
			case errText == "":
				errText = "none"
			}
			t.Rows = append(t.Rows, []string{st, label, ev.Phase, string(ev.Action), fmt.Sprintf("%.2f", ev.Scheduled),
				fmt.Sprintf("%.2f", ev.At), fmt.Sprintf("%.2f", ev.Done), errText})
		}
	}
	return t
}

// writePhasedMarkdown writes the phased scenarios' section, if any.
func writePhasedMarkdown(w io.Writer, rep report) {
	p := rep.Phased
	if len(p.Sections) == 0 {
		return
	}
	fmt.Fprintf(w, "## Phased scenarios\n\n%s\n\n", p.Intro)
	for _, s := range p.Sections {
		fmt.Fprintf(w, "### %s\n\n%s\n\n", s.Title, s.Summary)
		for _, l := range s.Lines {
			var what []string
			if l.Set != "" {
				what = append(what, "set `"+l.Set+"`")
			}
			if l.Other != "" {
				what = append(what, l.Other)
			}
			fmt.Fprintf(w, "- **%s** (%s): %s\n", l.Name, l.Span, strings.Join(what, "; "))
		}
		fmt.Fprintln(w)
		if len(s.Table.Rows) > 0 {
			markdownTable(w, s.Table.Head, s.Table.Rows)
		}
		if len(s.Events.Rows) > 0 {
			fmt.Fprintf(w, "%s\n\n", p.EventsIntro)
			markdownTable(w, s.Events.Head, s.Events.Rows)
		}
	}
}

// phasedHTML is the section in the HTML report, a template of page's
// ("phased", called with the report).
const phasedHTML = `{{with .Phased}}{{if .Sections}}<h2>Phased scenarios</h2>
<p>{{.Intro}}</p>
{{range .Sections}}<h3>{{.Title}}</h3>
<p>{{.Summary}}</p>
<ul>{{range .Lines}}<li><b>{{.Name}}</b> ({{.Span}}): {{if .Set}}set <code>{{.Set}}</code>{{if .Other}}; {{end}}{{end}}{{.Other}}</li>{{end}}</ul>
{{if .Table.Rows}}{{template "table" .Table}}{{end}}{{if .Events.Rows}}<p>{{$.Phased.EventsIntro}}</p>
{{template "table" .Events}}{{end}}{{range .Figures}}<figure><figcaption>{{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}{{end}}{{end}}{{end}}`

func init() {
	template.Must(page.New("phased").Parse(phasedHTML))
}
