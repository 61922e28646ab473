package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/client/probe"
)

const probeSynopsis = `Measures the capacity of one dependency: drives --method --target in closed loop (each user sends,
waits for the answer and sends again, no think time) at stepped concurrency, and reports per step
successes and rejections (503/429) per second, p50/p90/p99 latency of the successes (HDR histogram),
timeouts and errors. Then: the service time at low load (p50 at the lowest step), the throughput
plateau (median ok/s of the steps within 90% of the highest), the knee (the smallest concurrency
reaching 95% of the plateau, reported only if a step at 1.25 × it or above was probed; otherwise
null with the reason), where rejections begin (the lowest step with a rejection), and a Universal
Scalability Law fit (σ, κ, the concurrency of peak throughput, r²) on the steps without rejections;
a fit with r² below 0.9 is reported as fitting badly.

Each step starts its users from an idle target, warms up for --warm-up (not measured), is measured
for --step, then lets its requests in flight finish before the next step. Rates count each request
for the share of its duration inside the measured window; counts and latencies are of the requests
that completed inside it.

Safety: only --method to --target is ever sent (no identification, admin or metrics request, even to
a loadlab mock). The plan and every bound are printed before the first request (to stdout, or to
stderr with --json). Every request, ok or not, waits for a token of the --max-rate bucket (10 ms
deep), so a user that is refused at once cannot spin. The probe stops after a step that crosses
--stop-rejection-ratio, --stop-error-ratio (errors and timeouts) or --stop-p99, and before a step
that would not fit in --max-duration (then stopped_early is set, with the reason); nothing is sent
or awaited after --max-duration.

Output: a Markdown table (units in the headers), or with --json one object: plan, started_at,
duration_seconds, stopped_early, stop_reason, partial, service_time_seconds, service_time_concurrency,
plateau_per_second, plateau_steps, knee, knee_reason, rejections_begin_at, usl {fit_ok, reason, sigma,
kappa, lambda_per_second, peak_concurrency, peak_per_second, r2, steps_fitted}, notes, steps [{concurrency,
window_seconds, requests, ok, rejected, timeouts, errors, error_kinds, ok_per_second,
rejected_per_second, p50_seconds, p90_seconds, p99_seconds, max_seconds, mean_seconds, at_rate_limit}].
--out DIR also writes probe.json, probe.md and probe.html (charts of throughput and latency against
concurrency, the fit and the knee).

Exit codes: 0 measured (a stop limit reached is a finding, not a failure); 1 a measured request ended
in an error (a transport error or a status neither ok nor a rejection): the result is still printed;
2 bad input, or the first step failed entirely (no success: connection refused, only errors, no
answer), with the reason and no analysis — the probe gives up as soon as the first step's first 20
requests have all failed, so such a target is sent about 20; 130 interrupted: the steps completed are printed and written,
marked partial.
`

func runProbe(args []string, stdout io.Writer) error {
	cfg := probe.Default()
	fs, parse := newFlagSet("probe", probeSynopsis, stdout)
	fs.StringVar(&cfg.Target, "target", "", "URL to probe (required): http:// or https://, the only URL sent anything")
	fs.StringVar(&cfg.Method, "method", "", "HTTP method of every request (default GET, or POST with a --body)")
	fs.StringVar(&cfg.Body, "body", "", "request body, a Go text/template: {{.ID}} a unique request id, {{.Seq}} its sequence number,\n"+
		"{{json .ID}} the id as a JSON string (as in pipeline files)\n"+
		"(sent with Content-Type application/json unless a --header sets it),\n"+
		`e.g. '{"id":"{{.ID}}","complete":true}'`)
	fs.Func("header", "extra request header 'Name: value' (repeatable)", func(s string) error {
		name, value, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%q is not 'Name: value'", s)
		}
		if cfg.Headers == nil {
			cfg.Headers = http.Header{}
		}
		cfg.Headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		return nil
	})
	conc := fs.String("concurrency", "", "the steps, users in closed loop: numbers and ranges, e.g. 1-16,24,32,48,64\n(default 1 to --max-concurrency, one by one)")
	fs.DurationVar(&cfg.Step, "step", cfg.Step, "measured length of each step")
	fs.DurationVar(&cfg.WarmUp, "warm-up", cfg.WarmUp, "unmeasured warm-up before every step")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-request timeout, from send to the end of the answer (a timeout is counted, not an error)")
	fs.IntVar(&cfg.MaxConcurrency, "max-concurrency", cfg.MaxConcurrency, fmt.Sprintf("most users at once (at most %d); every step must be within it", probe.MaxConcurrencyLimit))
	fs.Float64Var(&cfg.MaxRate, "max-rate", cfg.MaxRate, "most requests per second over all users, ok or not")
	fs.DurationVar(&cfg.MaxDuration, "max-duration", cfg.MaxDuration, "longest the whole probe may take, warm-ups and drains included")
	fs.Float64Var(&cfg.StopRejectionRatio, "stop-rejection-ratio", cfg.StopRejectionRatio, "stop after a step whose rejections exceed this fraction of its requests")
	fs.Float64Var(&cfg.StopErrorRatio, "stop-error-ratio", cfg.StopErrorRatio, "stop after a step whose errors and timeouts exceed this fraction of its requests")
	fs.DurationVar(&cfg.StopP99, "stop-p99", cfg.StopP99, "stop after a step whose p99 latency of successes exceeds this (0: no limit)")
	okStatus := fs.String("ok-status", "", "statuses that count as success, comma-separated (default every 2xx)")
	rejectStatus := fs.String("reject-status", "", "statuses that count as rejections, comma-separated (default 503,429)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object (the plan and progress go to stderr)")
	out := fs.String("out", "", "also write probe.json, probe.md and probe.html into this folder (created if missing)")
	if err := parse(args); err != nil {
		return err
	}
	var err error
	if *conc != "" {
		if cfg.Concurrency, err = probe.ParseConcurrency(*conc); err != nil {
			return usageErr("%v", err)
		}
	}
	if cfg.OKStatuses, err = parseStatuses("ok-status", *okStatus); err != nil {
		return err
	}
	if cfg.RejectStatuses, err = parseStatuses("reject-status", *rejectStatus); err != nil {
		return err
	}
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
		if cfg.Body != "" {
			cfg.Method = http.MethodPost
		}
	}
	ctx, _, done, err := begin("", cfg.Validate())
	if err != nil {
		return err
	}
	defer done()
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return usageErr("--out: %v", err)
		}
	}
	progress := stdout
	if *asJSON {
		progress = os.Stderr
	}
	if err := probe.WritePlan(progress, cfg.Plan()); err != nil {
		return err
	}
	res, err := probe.Run(ctx, cfg, func(s probe.Step) { fmt.Fprintln(progress, probe.StepLine(s)) })
	if errors.Is(err, probe.ErrFirstStepFailed) {
		return usageErr("probe: %v", err)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	if *asJSON {
		err = writeJSON(stdout, res)
	} else {
		fmt.Fprintln(stdout)
		err = probe.WriteMarkdown(stdout, res)
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeProbeFiles(*out, res); err != nil {
			return err
		}
	}
	if res.Partial {
		return interrupted(fmt.Errorf("probe: %d of %d steps measured", len(res.Steps), len(res.Plan.Concurrency)))
	}
	errs := 0
	for _, s := range res.Steps {
		errs += s.Errors
	}
	if errs > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("probe: %d measured requests ended in an error (see errors and error_kinds per step)", errs)}
	}
	return nil
}

// parseStatuses parses a comma-separated list of HTTP statuses.
func parseStatuses(flagName, s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 100 || n > 599 {
			return nil, usageErr("--%s: %q is not an HTTP status", flagName, part)
		}
		out = append(out, n)
	}
	return out, nil
}

// writeProbeFiles writes probe.json, probe.md and probe.html into dir.
func writeProbeFiles(dir string, res probe.Result) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"probe.json", func(w io.Writer) error { return writeJSON(w, res) }},
		{"probe.md", func(w io.Writer) error { return probe.WriteMarkdown(w, res) }},
		{"probe.html", func(w io.Writer) error { return probe.WriteHTML(w, res) }},
	} {
		fh, err := os.Create(filepath.Join(dir, f.name))
		if err != nil {
			return err
		}
		err = f.write(fh)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("probe: writing %s: %w", f.name, err)
		}
	}
	return nil
}
