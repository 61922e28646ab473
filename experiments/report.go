package experiments

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/config"
)

// WriteOutputs writes results.json, report.md and report.html into dir.
func WriteOutputs(dir string, res *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(dir, "results.json"), res); err != nil {
		return err
	}
	var md bytes.Buffer
	WriteMarkdown(&md, res)
	if err := os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, res); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644)
}

func fmtStat(s Stat, ok bool, digits int) string {
	if !ok || s.N == 0 {
		return "—"
	}
	f := fmt.Sprintf("%%.%df", digits)
	if s.Min == s.Max {
		return fmt.Sprintf(f, s.Median)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}

func stat(cs CellSummary, metric string) (Stat, bool) {
	s, ok := cs.Stats[metric]
	return s, ok
}

// WriteMarkdown writes the report: the comparison tables in the shape of the
// lab's, the per-cell details with the Little's-law bound, and the verdicts.
func WriteMarkdown(w io.Writer, r *Results) {
	sp := r.Experiment
	fmt.Fprintf(w, "# Experiment %q\n\n", sp.Name)
	fmt.Fprintf(w, "%d records per run, %d runs per cell, time scale %g (times and rates below are in lab seconds), call timeout %v, permit timeout %v.\n\n",
		sp.Records, sp.Runs, sp.TimeScale, sp.CallTimeout, sp.PermitTimeout)
	e := r.Environment
	fmt.Fprintf(w, "Ran %s to %s on %s (%d CPUs), Go %s, kernel %s", r.Started.Format("2006-01-02 15:04:05Z"),
		r.Finished.Format("15:04:05Z"), e.CPUModel, e.NumCPU, e.GoVersion, e.Kernel)
	if e.GitCommit != "" {
		fmt.Fprintf(w, ", commit %s", short(e.GitCommit))
	}
	fmt.Fprintf(w, ".\nHypotheses %s, SHA-256 `%s`, preregistered at commit %s.\n\n", r.HypothesesFile, short(r.HypothesesSHA256), short(r.Lock.GitCommit))

	fmt.Fprintf(w, "## Accepted records per second\n\nMedian (minimum–maximum) over runs; only records whose write the system of record accepted count.\n\n")
	for _, cpu := range sp.CPUs {
		var rows [][]string
		for _, st := range sp.Strategies {
			row := []string{st}
			found := false
			for _, sc := range sp.Scenarios {
				cs, ok := r.summary(Cell{st, sc, cpu.Name})
				s, sok := stat(cs, "accepted_per_second")
				row = append(row, fmtStat(s, ok && sok, 2))
				found = found || ok
			}
			if found {
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "**%s**\n\n", cpu.Name)
		table(w, append([]string{"strategy"}, sp.Scenarios...), rows)
	}

	fmt.Fprintf(w, "## Every cell\n\nBound: Little's law from the configured profiles — the least of write workers / write time, the enrichment budget / (3 × enrichment time), records in flight / time per record; efficiency = measured median / bound.\n\n")
	var rows [][]string
	for _, cs := range r.Cells {
		g := func(m string, d int) string { s, ok := stat(cs, m); return fmtStat(s, ok, d) }
		failed := ""
		if cs.Failed > 0 {
			failed = fmt.Sprintf("%d of %d", cs.Failed, cs.Runs)
		}
		rows = append(rows, []string{cs.Cell.String(), g("accepted_per_second", 2),
			fmt.Sprintf("%.1f (%s)", cs.Bound.Bound, cs.Bound.Limit), fmt.Sprintf("%.2f", cs.Efficiency),
			g("duration_seconds", 1), g("write_rejections", 0), g("peak_concurrent_writes", 0),
			g("peak_in_flight_enrichment", 0), g("peak_in_flight_records", 0), g("incomplete", 0),
			g("permit_timeouts", 0), g("call_timeouts", 0), g("gomaxprocs", 0), cs.Mechanism, failed})
	}
	table(w, []string{"cell", "accepted/s", "bound (limit)", "efficiency", "duration s", "write 503s", "peak concurrent writes",
		"peak enrichment calls", "peak write calls", "incomplete", "permit timeouts", "call timeouts", "GOMAXPROCS", "CPU limit", "failed runs"}, rows)

	fmt.Fprintf(w, "## Verdicts\n\nEach hypothesis was preregistered before the first run. Supported: the whole min–max range over runs satisfies the claim; refuted: none of it does; inconclusive: the range straddles the threshold. A refuted hypothesis is a finding, not a failure.\n\n")
	rows = nil
	for _, v := range r.Verdicts {
		var meas []string
		for _, c := range v.Cells {
			meas = append(meas, fmt.Sprintf("%s: %.3g [%.3g, %.3g] → %s", c.Cell, c.Median, c.Min, c.Max, c.Verdict))
		}
		rows = append(rows, []string{v.ID, "**" + v.Verdict + "**", v.Claim, v.Op + " " + v.Threshold.String(),
			strings.Join(meas, "<br>"), v.Note})
	}
	table(w, []string{"id", "verdict", "claim", "test", "measured: median [min, max]", "note"}, rows)
	counts := map[string]int{}
	for _, v := range r.Verdicts {
		counts[v.Verdict]++
	}
	fmt.Fprintf(w, "%d supported, %d refuted, %d inconclusive.\n", counts[Supported], counts[Refuted], counts[Inconclusive])
	var failures []string
	for _, cs := range r.Cells {
		for _, f := range cs.Failures {
			failures = append(failures, cs.Cell.String()+" "+f)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\n## Failed runs\n\n")
		for _, f := range failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "(none)"
	}
	return s
}

func table(w io.Writer, head []string, rows [][]string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	fmt.Fprintf(w, "| %s |\n|", strings.Join(head, " | "))
	for range head {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		for i := range r {
			r[i] = esc(r[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// errPoints are whiskers from min to max around each median.
type errPoints struct{ x, y, lo, hi []float64 }

func (e errPoints) Len() int                        { return len(e.x) }
func (e errPoints) XY(i int) (float64, float64)     { return e.x[i], e.y[i] }
func (e errPoints) YError(i int) (float64, float64) { return e.y[i] - e.lo[i], e.hi[i] - e.y[i] }

type nominalTicks struct {
	at     []float64
	labels []string
}

func (t nominalTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, x := range t.at {
		out = append(out, plot.Tick{Value: x, Label: t.labels[i]})
	}
	return out
}

// groupedChart draws a metric's median per strategy, grouped by scenario,
// with min–max whiskers, for one CPU setting; line adds a horizontal
// reference line when not NaN.
func groupedChart(r *Results, cpu, metric, title, ylabel string, line float64, lineLabel string) (string, error) {
	sp := r.Experiment
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	var pts errPoints
	ticks := nominalTicks{}
	n := len(sp.Strategies) + 1
	drawn := 0
	for si, st := range sp.Strategies {
		legend := false
		for ji, sc := range sp.Scenarios {
			cs, ok := r.summary(Cell{st, sc, cpu})
			s, sok := stat(cs, metric)
			if !ok || !sok {
				continue
			}
			x := float64(ji*n + si)
			bar, err := plotter.NewBarChart(plotter.Values{s.Median}, vg.Points(14))
			if err != nil {
				return "", err
			}
			bar.XMin = x
			bar.Color = palette[si%len(palette)]
			bar.LineStyle.Width = 0
			p.Add(bar)
			if !legend {
				p.Legend.Add(st, bar)
				legend = true
			}
			pts.x, pts.y = append(pts.x, x), append(pts.y, s.Median)
			pts.lo, pts.hi = append(pts.lo, s.Min), append(pts.hi, s.Max)
			drawn++
		}
	}
	if drawn == 0 {
		return "", nil
	}
	for ji, sc := range sp.Scenarios {
		ticks.at = append(ticks.at, float64(ji*n)+float64(len(sp.Strategies)-1)/2)
		ticks.labels = append(ticks.labels, sc)
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -1, float64(len(sp.Scenarios)*n)+1.5 // room for the legend
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return "", err
	}
	eb.LineStyle.Width = vg.Points(1.2)
	p.Add(eb)
	if !math.IsNaN(line) {
		l, err := plotter.NewLine(plotter.XYs{{X: -1, Y: line}, {X: float64(len(sp.Scenarios) * n), Y: line}})
		if err != nil {
			return "", err
		}
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(lineLabel, l)
	}
	p.Legend.Top = true
	return svg(p, 8*vg.Inch, 4*vg.Inch)
}

// timelineChart draws calls in flight per dependency over one run.
func timelineChart(rec RunRecord) (string, error) {
	if rec.Client == nil || len(rec.Client.Timeline) == 0 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Calls in flight, %s (run %d)", rec.Cell, rec.Run)
	p.X.Label.Text = "lab seconds"
	p.Y.Label.Text = "calls in flight"
	series := []struct {
		name string
		get  func(records.Sample) int
	}{
		{"enrichment", func(s records.Sample) int { return s.Enrichment }},
		{"records (writes)", func(s records.Sample) int { return s.Records }},
	}
	for i, s := range series {
		xy := make(plotter.XYs, len(rec.Client.Timeline))
		for k, smp := range rec.Client.Timeline {
			xy[k] = plotter.XY{X: smp.T, Y: float64(s.get(smp))}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return "", err
		}
		l.Color = palette[i]
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	return svg(p, 8*vg.Inch, 2.6*vg.Inch)
}

func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:] // drop the XML prologue for inline use
	}
	return s, nil
}

// WriteHTML writes a self-contained page: the Markdown report's tables and
// the charts as inline SVG.
func WriteHTML(w io.Writer, r *Results) error {
	sp := r.Experiment
	var charts []string
	add := func(s string, err error) error {
		if err != nil {
			return err
		}
		if s != "" {
			charts = append(charts, s)
		}
		return nil
	}
	workers := float64(config.Default().Records.Workers)
	for _, cpu := range sp.CPUs {
		if err := add(groupedChart(r, cpu.Name, "accepted_per_second", "Accepted records per second, "+cpu.Name+" (median, min–max)", "records / lab second", math.NaN(), "")); err != nil {
			return err
		}
		if err := add(groupedChart(r, cpu.Name, "write_rejections", "Write 503s per run, "+cpu.Name, "503 answers", math.NaN(), "")); err != nil {
			return err
		}
		if err := add(groupedChart(r, cpu.Name, "peak_concurrent_writes", "Peak concurrent writes offered to the system of record, "+cpu.Name, "writes at once", workers, "6 workers")); err != nil {
			return err
		}
	}
	// One run per strategy: the first CPU setting, slow-write if present.
	scenario := sp.Scenarios[0]
	if slices.Contains(sp.Scenarios, config.ProfileSlowWrite) {
		scenario = config.ProfileSlowWrite
	}
	for _, st := range sp.Strategies {
		for _, rec := range r.Runs {
			if rec.Cell.Strategy == st && rec.Cell.Scenario == scenario && rec.Cell.CPU == sp.CPUs[0].Name && rec.Failed == "" && rec.Client != nil && len(rec.Client.Timeline) > 0 {
				if err := add(timelineChart(rec)); err != nil {
					return err
				}
				break
			}
		}
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f3f3f3}figure{margin:1.5em 0}svg{max-width:100%%;height:auto}
.supported{color:#176617;font-weight:bold}.refuted{color:#a01010;font-weight:bold}.inconclusive{color:#8a6d00;font-weight:bold}
</style></head><body>
`, html.EscapeString("loadlab experiment "+sp.Name))
	fmt.Fprint(w, markdownToHTML(md.String()))
	fmt.Fprintln(w, "<h2>Charts</h2>")
	for _, c := range charts {
		fmt.Fprintf(w, "<figure>%s</figure>\n", c)
	}
	_, err := fmt.Fprintln(w, "</body></html>")
	return err
}

// markdownToHTML renders the small subset of Markdown the report uses:
// headings, paragraphs, tables, bullet lists, **bold** and `code`.
func markdownToHTML(md string) string {
	var b strings.Builder
	inline := func(s string) string {
		s = html.EscapeString(s)
		s = strings.ReplaceAll(s, "&lt;br&gt;", "<br>")
		for _, pair := range [][2]string{{"**", "b"}, {"`", "code"}} {
			for {
				i := strings.Index(s, pair[0])
				if i < 0 {
					break
				}
				j := strings.Index(s[i+len(pair[0]):], pair[0])
				if j < 0 {
					break
				}
				inner := s[i+len(pair[0]) : i+len(pair[0])+j]
				cls := ""
				if pair[1] == "b" && (inner == Supported || inner == Refuted || inner == Inconclusive) {
					cls = ` class="` + inner + `"`
				}
				s = s[:i] + "<" + pair[1] + cls + ">" + inner + "</" + pair[1] + ">" + s[i+2*len(pair[0])+j:]
			}
		}
		return s
	}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "# "):
			fmt.Fprintf(&b, "<h1>%s</h1>\n", inline(l[2:]))
		case strings.HasPrefix(l, "## "):
			fmt.Fprintf(&b, "<h2>%s</h2>\n", inline(l[3:]))
		case strings.HasPrefix(l, "| "):
			b.WriteString("<table>\n")
			head := true
			for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				if strings.HasPrefix(lines[i], "| --- |") {
					continue // the header separator
				}
				cells := strings.Split(strings.Trim(lines[i], "| "), " | ")
				tag := "td"
				if head {
					tag = "th"
				}
				b.WriteString("<tr>")
				for _, c := range cells {
					fmt.Fprintf(&b, "<%s>%s</%s>", tag, inline(strings.ReplaceAll(c, "\\|", "|")), tag)
				}
				b.WriteString("</tr>\n")
				head = false
			}
			b.WriteString("</table>\n")
			i--
		case strings.HasPrefix(l, "- "):
			b.WriteString("<ul>\n")
			for ; i < len(lines) && strings.HasPrefix(lines[i], "- "); i++ {
				fmt.Fprintf(&b, "<li>%s</li>\n", inline(lines[i][2:]))
			}
			b.WriteString("</ul>\n")
			i--
		case strings.TrimSpace(l) == "":
		default:
			fmt.Fprintf(&b, "<p>%s</p>\n", inline(l))
		}
	}
	return b.String()
}
