package probe

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WritePlan prints what a probe will do and every bound it keeps, before
// its first request.
func WritePlan(w io.Writer, p Plan) error {
	per := time.Duration((p.StepSeconds + p.WarmUpSeconds) * float64(time.Second))
	maxDur := secs(p.MaxDurationSeconds)
	var b strings.Builder
	fmt.Fprintf(&b, "Probe plan: %s %s (nothing else is sent to it)\n", p.Method, p.Target)
	fmt.Fprintf(&b, "  steps: concurrency %s (%d steps), each %v warm-up + %v measured, drained before the next\n",
		Ranges(p.Concurrency), len(p.Concurrency), secs(p.WarmUpSeconds), secs(p.StepSeconds))
	fmt.Fprintf(&b, "  bounds: at most %d users, %g requests/s over all users, %v in all, %v per request\n",
		p.MaxConcurrency, p.MaxRatePerSecond, maxDur, secs(p.TimeoutSeconds))
	p99 := "no p99 limit"
	if p.StopP99Seconds > 0 {
		p99 = fmt.Sprintf("p99 above %v", secs(p.StopP99Seconds))
	}
	fmt.Fprintf(&b, "  stops after a step with rejections above %g, errors and timeouts above %g of its requests, or %s\n",
		p.StopRejectionRatio, p.StopErrorRatio, p99)
	planned := secs(p.PlannedSeconds)
	if p.FitSteps < len(p.Concurrency) {
		fmt.Fprintf(&b, "  planned: %v of warm-ups and steps, more than --max-duration %v: only the first %d steps fit (up to concurrency %d); the probe stops at the bound\n",
			planned, maxDur, p.FitSteps, p.Concurrency[max(0, p.FitSteps-1)])
	} else {
		fmt.Fprintf(&b, "  planned: %v of warm-ups and steps (%v each) plus drains, within --max-duration %v\n", planned, per, maxDur)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// StepLine is one line on a step, for progress.
func StepLine(s Step) string {
	return fmt.Sprintf("concurrency %3d: %8.1f ok/s  %8.1f rejected/s  p50 %s  p99 %s  timeouts %d  errors %d",
		s.Concurrency, s.OKPerSecond, s.RejectedPerSecond, ms(s.P50Seconds), ms(s.P99Seconds), s.Timeouts, s.Errors)
}

// Ranges writes concurrencies compactly: "1-16, 24, 32".
func Ranges(v []int) string {
	var parts []string
	for i := 0; i < len(v); {
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(v[i]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", v[i], v[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func secs(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// ms writes a latency in milliseconds, "–" when there is none.
func ms(s *float64) string {
	if s == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f ms", *s*1000)
}

// summary is the analysis as label/value rows, shared by Markdown and HTML.
func summary(r Result) [][2]string {
	a := r.Analysis
	svc := "–"
	if a.ServiceTimeSeconds != nil {
		svc = ms(a.ServiceTimeSeconds)
	}
	knee := "none: " + a.KneeReason
	if a.Knee != nil {
		knee = strconv.Itoa(*a.Knee)
	}
	rej := "none"
	if a.RejectionsBeginAt != nil {
		rej = strconv.Itoa(*a.RejectionsBeginAt)
	}
	rows := [][2]string{
		{fmt.Sprintf("service time at low load (p50 at concurrency %d)", a.ServiceTimeConcurrency), svc},
		{"throughput plateau (median of the steps within 90% of the highest)", fmt.Sprintf("%.1f ok/s (steps %s)", a.PlateauPerSecond, Ranges(a.PlateauSteps))},
		{"knee (smallest concurrency reaching 95% of the plateau)", knee},
		{"rejections (503/429) begin at concurrency", rej},
		{"Universal Scalability Law fit", uslText(a.USL)},
	}
	if r.StoppedEarly {
		rows = append(rows, [2]string{"stopped early", r.StopReason})
	}
	for _, n := range a.Notes {
		rows = append(rows, [2]string{"note", n})
	}
	return rows
}

func uslText(u USL) string {
	if u.Sigma == nil {
		return "no fit: " + u.Reason
	}
	peak := "no peak (the fitted throughput does not turn down)"
	if u.PeakConcurrency != nil {
		peak = fmt.Sprintf("peak at concurrency %.1f (%.1f ok/s)", *u.PeakConcurrency, *u.PeakPerSecond)
	}
	verdict := "fits"
	if !u.FitOK {
		verdict = u.Reason
	}
	return fmt.Sprintf("σ %.4f, κ %.5f, λ %.2f ok/s, %s, r² %.3f over steps %s: %s",
		*u.Sigma, *u.Kappa, *u.LambdaPerSecond, peak, *u.R2, Ranges(u.StepsFitted), verdict)
}

// stepHead and stepRow are the steps table, units in the headers.
var stepHead = []string{"concurrency", "ok (per s)", "rejected (per s)", "p50 (ms)", "p90 (ms)", "p99 (ms)", "max (ms)",
	"timeouts", "errors", "requests in window"}

func stepRow(s Step) []string {
	f := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f", *p*1000)
	}
	errs := strconv.Itoa(s.Errors)
	if len(s.ErrorKinds) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(s.ErrorKinds)) {
			kinds = append(kinds, fmt.Sprintf("%s ×%d", k, s.ErrorKinds[k]))
		}
		errs += " (" + strings.Join(kinds, "; ") + ")"
	}
	return []string{strconv.Itoa(s.Concurrency), fmt.Sprintf("%.1f", s.OKPerSecond), fmt.Sprintf("%.1f", s.RejectedPerSecond),
		f(s.P50Seconds), f(s.P90Seconds), f(s.P99Seconds), f(s.MaxSeconds), strconv.Itoa(s.Timeouts), errs, strconv.Itoa(s.Requests)}
}

// WriteMarkdown writes the result as Markdown: the analysis, then one row
// per step.
func WriteMarkdown(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capacity probe: %s %s\n\n", r.Plan.Method, r.Plan.Target)
	if r.Partial {
		b.WriteString("**Interrupted: partial result, the steps completed before the interruption.**\n\n")
	}
	fmt.Fprintf(&b, "Started %s, ran %.1f s; steps of %v after a %v warm-up each, at most %d users, %g requests/s, %v in all.\n\n",
		r.StartedAt.Format(time.RFC3339), r.DurationSeconds, secs(r.Plan.StepSeconds), secs(r.Plan.WarmUpSeconds),
		r.Plan.MaxConcurrency, r.Plan.MaxRatePerSecond, secs(r.Plan.MaxDurationSeconds))
	b.WriteString("| | |\n| --- | --- |\n")
	for _, row := range summary(r) {
		fmt.Fprintf(&b, "| %s | %s |\n", mdCell(row[0]), mdCell(row[1]))
	}
	b.WriteString("\n## Steps\n\n")
	b.WriteString("Rates count each request for the share of its duration inside the measured window; counts and latencies (of successes) are of the requests that completed inside it.\n\n")
	b.WriteString("| " + strings.Join(stepHead, " | ") + " |\n|" + strings.Repeat(" ---: |", len(stepHead)) + "\n")
	for _, s := range r.Steps {
		b.WriteString("| " + strings.Join(stepRow(s), " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

var page = template.Must(template.New("probe").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loadlab probe {{.Method}} {{.Target}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right}figure{margin:1.5em 0}figcaption{font-size:14px;margin-bottom:.3em}svg{max-width:100%;height:auto}
.partial{background:#fff3cd;border:1px solid #c9a227;padding:.5em;font-weight:bold}
</style></head><body>
<h1>Capacity probe: {{.Method}} {{.Target}}</h1>
{{if .Partial}}<p class="partial">Interrupted: partial result, the steps completed before the interruption.</p>
{{end}}<p>{{.Ran}}</p>
<table>{{range .Summary}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
{{range .Figures}}<figure><figcaption>{{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}<h2>Steps</h2>
<p>Rates count each request for the share of its duration inside the measured window; counts and latencies (of successes) are of the requests that completed inside it.</p>
<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</table>
</body></html>
`))

// WriteHTML writes the result as a self-contained HTML page: the analysis,
// the charts (inline SVG) and the steps.
func WriteHTML(w io.Writer, r Result) error {
	figs, err := charts(r)
	if err != nil {
		return err
	}
	data := struct {
		Method, Target, Ran string
		Partial             bool
		Summary             [][2]string
		Figures             []figure
		Head                []string
		Rows                [][]string
	}{Method: r.Plan.Method, Target: r.Plan.Target, Partial: r.Partial, Summary: summary(r), Figures: figs, Head: stepHead,
		Ran: fmt.Sprintf("Started %s, ran %.1f s; steps of %v after a %v warm-up each, at most %d users, %g requests/s, %v in all.",
			r.StartedAt.Format(time.RFC3339), r.DurationSeconds, secs(r.Plan.StepSeconds), secs(r.Plan.WarmUpSeconds),
			r.Plan.MaxConcurrency, r.Plan.MaxRatePerSecond, secs(r.Plan.MaxDurationSeconds))}
	for _, s := range r.Steps {
		data.Rows = append(data.Rows, stepRow(s))
	}
	return page.Execute(w, data)
}
