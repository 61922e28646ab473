package report

import (
	"fmt"
	"html/template"
	"io"

	"github.com/loadlab/loadlab/experiments/report/charts"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// page is the self-contained HTML report: the report's tables rendered by
// html/template from the same figures as the Markdown, and the charts as
// inline SVG.
var page = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>loadlab {{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px;max-width:100%}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;overflow-wrap:break-word}
th{background:#f3f3f3}figure{margin:1.5em 0}figcaption{font-size:14px;margin-bottom:.3em}svg{max-width:100%;height:auto}
.answer{font-size:17px}.partial{background:#fff3cd;border:1px solid #c9a227;padding:.5em;font-weight:bold}.supported{color:#176617;font-weight:bold}.refuted{color:#a01010;font-weight:bold}.inconclusive{color:#8a6d00;font-weight:bold}
</style></head><body>
<h1>{{.Title}}</h1>
{{if .Partial}}<p class="partial">{{.Partial}}</p>
{{end}}{{if .Exploratory}}<p class="partial">Exploratory: {{.Exploratory}}. The verdicts are computed, not findings.</p>
{{end}}{{if .Verdicts}}<p class="answer">{{.Counts}}</p>
<table>
<tr><th>id</th><th>verdict</th><th>claim</th></tr>
{{range .Verdicts}}<tr><td>{{.ID}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Claim}}{{if .Label}} ({{.Label}}){{end}}</td></tr>
{{end}}</table>
{{end}}{{range .Headlines}}<figure>{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}{{.SVG}}</figure>
{{end}}<h2>How it ran</h2>
<p>{{.Setup}}</p>
{{if .Strategies}}<p>{{.Strategies}}</p>
{{end}}{{if .OwnIntro}}<p>{{.OwnIntro}}</p>
{{template "table" .OwnCopies}}<p>Scenarios: {{range $i, $s := .OwnScenarios}}{{if $i}}; {{end}}{{$s}}{{end}}.</p>
{{end}}<p>{{.Ran}}<br>Hypotheses {{.HypothesesFile}}, SHA-256 <code>{{.HypothesesSHA}}</code>, preregistered at commit {{.LockCommit}}.</p>
<h2>Accepted records per second</h2>
<p>{{.AcceptedIntro}}</p>
{{range .Accepted}}<p><b>{{.Caption}}</b></p>
{{template "table" .}}{{end}}
{{if .Verdicts}}<h2>Verdicts in detail</h2>
<p>{{.VerdictsIntro}}</p>
<table>
<tr><th>id</th><th>verdict</th><th>test</th><th>measured: median [min, max]</th><th>note</th></tr>
{{range .Verdicts}}<tr><td>{{.ID}}</td><td class="{{.Verdict}}">{{if .Label}}{{.Label}}: {{end}}{{.Verdict}}</td><td>{{.Test}}</td><td>{{range $i, $m := .Measured}}{{if $i}}<br>{{end}}{{$m}}{{end}}</td><td>{{.Note}}</td></tr>
{{end}}</table>
{{end}}<h2>Time-scale calibration</h2>
{{if .Calibration.Rows}}<p>{{.CalibrationIntro}}</p>
{{template "table" .Calibration}}{{end}}<p>{{.CalibrationNote}}</p>
{{if .Advised.Rows}}<h2>Advised strategies</h2><p>{{.AdvisedIntro}}</p>
{{template "table" .Advised}}{{range .AdvisedNotes}}<p>{{.}}</p>{{end}}{{end}}
<h2>Every cell</h2>
<p>{{.CellsIntro}}</p>
{{range .CellTables}}{{template "table" .}}{{end}}
{{if .Derived.Rows}}<p>{{.Derived.Caption}}</p>
{{template "table" .Derived}}{{end}}
{{template "phased" .}}
{{template "adaptive" .Adaptive}}
{{if .Excluded}}<h2>Excluded runs</h2>
<ul>{{range .Excluded}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Figures}}<h2>More charts</h2>
{{range .Figures}}<figure>{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}{{.SVG}}</figure>
{{end}}{{end}}</body></html>
{{define "table"}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}`))

// htmlFigure is a chart as the template takes it: the SVG is ours, drawn by
// gonum/plot, and goes in unescaped.
type htmlFigure struct {
	Caption string
	SVG     template.HTML
}

// WriteHTML writes the self-contained HTML report.
func WriteHTML(w io.Writer, r *resultsfile.Results) error {
	figs, err := charts.Figures(r)
	if err != nil {
		return err
	}
	data := struct {
		report
		AcceptedIntro      string
		Headlines, Figures []htmlFigure
		CellTables         []table
		Adaptive           adaptiveSection
	}{report: newReport(r), AcceptedIntro: acceptedIntro, Adaptive: adaptiveSectionOf(r)}
	// Sixteen columns overflow a laptop's screen: what each cell achieved,
	// then what limited it and how many runs counted.
	data.CellTables = []table{columns(data.Cells, 0, 1, 2, 3, 4, 5, 6, 9), columns(data.Cells, 0, 7, 8, 10, 11, 12, 13, 14, 15)}
	if len(data.CellSplit) == 1 {
		first, rest := []int{}, []int{0}
		for i := range data.Cells.Head {
			if i < data.CellSplit[0] {
				first = append(first, i)
			} else {
				rest = append(rest, i)
			}
		}
		data.CellTables = []table{columns(data.Cells, first...), columns(data.Cells, rest...)}
	}
	for i, s := range data.Phased.Sections {
		f, err := charts.Phased(r, s.scen, s.cpu)
		if err != nil {
			return fmt.Errorf("phased scenario %s: %w", s.Title, err)
		}
		data.Phased.Sections[i].Figures = htmlFigures(f)
	}
	adaptive, err := charts.Adaptive(r)
	if err != nil {
		return err
	}
	data.Adaptive.Figures = htmlFigures(adaptive)
	for _, f := range figs {
		if f.Headline {
			data.Headlines = append(data.Headlines, htmlFigureOf(f))
		} else {
			data.Figures = append(data.Figures, htmlFigureOf(f))
		}
	}
	return page.Execute(w, data)
}

// htmlFigureOf is a chart as the template takes it.
func htmlFigureOf(f charts.Figure) htmlFigure {
	return htmlFigure{Caption: f.Caption, SVG: template.HTML(f.SVG)} // #nosec G203: our own SVG
}

// htmlFigures is charts as the template takes them.
func htmlFigures(figs []charts.Figure) []htmlFigure {
	var out []htmlFigure
	for _, f := range figs {
		out = append(out, htmlFigureOf(f))
	}
	return out
}

// columns is t with only the columns at idx, in that order.
func columns(t table, idx ...int) table {
	pick := func(row []string) []string {
		out := make([]string, 0, len(idx))
		for _, i := range idx {
			if i < len(row) {
				out = append(out, row[i])
			}
		}
		return out
	}
	out := table{Caption: t.Caption, Head: pick(t.Head)}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, pick(r))
	}
	return out
}
