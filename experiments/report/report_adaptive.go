package report

import (
	"fmt"
	"html/template"
	"io"

	"github.com/loadlab/loadlab/experiments/report/charts"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// adaptiveIntro says what the adaptive limits and retries table shows.
const adaptiveIntro = "Per cell with adaptive limits (C5) or retries, median (minimum–maximum) over the cell's valid runs of each " +
	"run's figure: the adaptive limit's median and minimum over the run's samples, the offered load amplification (requests the " +
	"mock service saw per first attempt of the client: 1× without retries), and the retries the client made to the system of " +
	"record and those its retry budget denied."

// adaptiveChartsIntro says what the section's charts show.
const adaptiveChartsIntro = "The charts show each adaptive strategy's limit over run 1 against the system of record's capacity, " +
	"and the offered load amplification per strategy."

// adaptiveSection is the adaptive limits and retries section: the table
// in both reports, the charts in the HTML one (WriteHTML draws them).
type adaptiveSection struct {
	Intro, ChartsIntro string
	Table              table
	Figures            []htmlFigure
}

// adaptiveMetrics are the table's columns after the cell: metric, header
// with its unit, digits.
var adaptiveMetrics = []struct {
	metric, head string
	digits       int
}{
	{"records_limit_median", "records limit, median (calls in flight)", 1},
	{"records_limit_min", "records limit, min (calls in flight)", 1},
	{"enrichment_limit_median", "enrichment limit, median (calls in flight)", 1},
	{"records_amplification", "records amplification (requests per first attempt, ×)", 2},
	{"enrichment_amplification", "enrichment amplification (requests per first attempt, ×)", 2},
	{"records_retries", "records retries (per run)", 0},
	{"records_retries_denied", "records retries denied (per run)", 0},
}

// adaptiveSectionOf builds the section, its table empty when no cell has
// any of its metrics (results from before adaptive limits and retries).
func adaptiveSectionOf(r *resultsfile.Results) adaptiveSection {
	sec := adaptiveSection{Intro: adaptiveIntro, ChartsIntro: adaptiveChartsIntro, Table: table{Head: []string{"cell"}}}
	for _, m := range adaptiveMetrics {
		sec.Table.Head = append(sec.Table.Head, m.head)
	}
	for _, cs := range r.Cells {
		row := []string{cs.Cell.String()}
		for _, m := range adaptiveMetrics {
			s, ok := cs.Stats[m.metric]
			row = append(row, fmtStat(s, ok, m.digits))
		}
		if adapts(cs) {
			sec.Table.Rows = append(sec.Table.Rows, row)
		}
	}
	return sec
}

// adapts says whether a cell has what the section shows: an adaptive
// limit, or retries. A static strategy's cell, all dashes and 1.00, is
// left out.
func adapts(cs resultsfile.CellSummary) bool {
	for _, m := range []string{"records_limit_median", "enrichment_limit_median"} {
		if s, ok := cs.Stats[m]; ok && s.N > 0 {
			return true
		}
	}
	return charts.Retried(cs)
}

// writeAdaptiveMarkdown writes the adaptive limits and retries section, if
// any cell has its metrics.
func writeAdaptiveMarkdown(w io.Writer, r *resultsfile.Results) {
	sec := adaptiveSectionOf(r)
	if len(sec.Table.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Adaptive limits and retries\n\n%s\n\n", sec.Intro)
	markdownTable(w, sec.Table.Head, sec.Table.Rows)
}

// adaptiveHTML is the section in the HTML report, a template of page's
// ("adaptive", called with the section).
const adaptiveHTML = `{{if or .Table.Rows .Figures}}<h2>Adaptive limits and retries</h2>
{{if .Table.Rows}}<p>{{.Intro}}</p>
{{template "table" .Table}}{{end}}{{if .Figures}}<p>{{.ChartsIntro}}</p>
{{end}}{{range .Figures}}<figure><figcaption>{{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}{{end}}`

func init() {
	template.Must(page.New("adaptive").Parse(adaptiveHTML))
}
