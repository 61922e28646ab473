package report

import (
	"html/template"
	"io"

	"github.com/loadlab/loadlab/experiments/judge"
)

// page is the self-contained HTML report: the report's tables rendered by
// html/template from the same figures as the Markdown, and the charts as
// inline SVG.
var page = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loadlab {{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f3f3f3}figure{margin:1.5em 0}figcaption{font-size:14px;margin-bottom:.3em}svg{max-width:100%;height:auto}
.partial{background:#fff3cd;border:1px solid #c9a227;padding:.5em;font-weight:bold}.supported{color:#176617;font-weight:bold}.refuted{color:#a01010;font-weight:bold}.inconclusive{color:#8a6d00;font-weight:bold}
</style></head><body>
<h1>{{.Title}}</h1>
{{if .Partial}}<p class="partial">{{.Partial}}</p>
{{end}}<p>{{.Setup}}</p>
<p>{{.Ran}}<br>Hypotheses {{.HypothesesFile}}, SHA-256 <code>{{.HypothesesSHA}}</code>, preregistered at commit {{.LockCommit}}.</p>
<h2>Time-scale calibration</h2>
{{if .Calibration.Rows}}<p>{{.CalibrationIntro}}</p>
{{template "table" .Calibration}}{{end}}<p>{{.CalibrationNote}}</p>
{{if .Advised.Rows}}<h2>Advised strategies</h2><p>{{.AdvisedIntro}}</p>
{{template "table" .Advised}}{{range .AdvisedNotes}}<p>{{.}}</p>{{end}}{{end}}
<h2>Accepted records per second</h2>
<p>{{.AcceptedIntro}}</p>
{{range .Accepted}}<p><b>{{.Caption}}</b></p>
{{template "table" .}}{{end}}
<h2>Every cell</h2>
<p>{{.CellsIntro}}</p>
{{template "table" .Cells}}
{{if .Derived.Rows}}<p>{{.Derived.Caption}}</p>
{{template "table" .Derived}}{{end}}
{{template "phased" .}}
{{template "adaptive" .Adaptive}}
<h2>Verdicts</h2>
<p>{{.VerdictsIntro}}</p>
{{if .Exploratory}}<p class="partial">Exploratory: {{.Exploratory}}. The verdicts below are computed, not findings.</p>
{{end}}<table>
<tr><th>id</th><th>verdict</th><th>claim</th><th>test</th><th>measured: median [min, max]</th><th>note</th></tr>
{{range .Verdicts}}<tr><td>{{.ID}}</td><td class="{{.Verdict}}">{{if .Label}}{{.Label}}: {{end}}{{.Verdict}}</td><td>{{.Claim}}</td><td>{{.Test}}</td><td>{{range $i, $m := .Measured}}{{if $i}}<br>{{end}}{{$m}}{{end}}</td><td>{{.Note}}</td></tr>
{{end}}</table>
<p>{{.Counts}}</p>
{{if .Excluded}}<h2>Excluded runs</h2>
<ul>{{range .Excluded}}<li>{{.}}</li>{{end}}</ul>
{{end}}<h2>Charts</h2>
{{range .Figures}}<figure>{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}{{.SVG}}</figure>
{{end}}</body></html>
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
func WriteHTML(w io.Writer, r *judge.Results) error {
	figs, err := figures(r)
	if err != nil {
		return err
	}
	data := struct {
		report
		AcceptedIntro, CellsIntro string
		Figures                   []htmlFigure
		Adaptive                  adaptiveSection
	}{report: newReport(r), AcceptedIntro: acceptedIntro, CellsIntro: cellsIntro, Adaptive: adaptiveSectionOf(r)}
	if err := addPhasedFigures(r, data.Phased.Sections); err != nil {
		return err
	}
	if err := addAdaptiveFigures(r, &data.Adaptive); err != nil {
		return err
	}
	for _, f := range figs {
		data.Figures = append(data.Figures, htmlFigure{Caption: f.Caption, SVG: template.HTML(f.SVG)}) // #nosec G203: our own SVG
	}
	return page.Execute(w, data)
}
