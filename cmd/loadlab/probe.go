package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/field"
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

// probeFlagNames names probe.Options' fields as loadlab probe's flags.
var probeFlagNames = field.Names{
	"target": "--target", "method": "--method", "body": "--body", "headers": "--header",
	"concurrency": "--concurrency", "step": "--step", "warm_up": "--warm-up", "timeout": "--timeout",
	"max_concurrency": "--max-concurrency", "max_rate": "--max-rate", "max_duration": "--max-duration",
	"stop_rejection_ratio": "--stop-rejection-ratio", "stop_error_ratio": "--stop-error-ratio", "stop_p99": "--stop-p99",
	"ok_statuses": "--ok-status", "reject_statuses": "--reject-status", "out": "--out",
}

func runProbe(args []string, stdout io.Writer) error {
	opts, err := probeOptions(args, stdout)
	if err != nil {
		return err
	}
	if err := checkURL("probe", "--target", opts.Config.Target); err != nil {
		return err
	}
	ctx, _, done, err := begin("", nil)
	if err != nil {
		return err
	}
	defer done()
	res, err := probe.Execute(ctx, opts, stdout, os.Stderr)
	switch _, badInput := field.Of(err); {
	case errors.Is(err, probe.ErrFirstStepFailed):
		return usageErr("probe: %v", err)
	case badInput:
		return usageErr("%v", probeFlagNames.Rename(err))
	case err != nil:
		return err
	case res.Partial:
		return interrupted(fmt.Errorf("probe: %d of %d steps measured", len(res.Steps), len(res.Plan.Concurrency)), opts.Out)
	case res.Errors() > 0:
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("probe: %d measured requests ended in an error (see errors and error_kinds per step)", res.Errors())}
	}
	return nil
}

// probeOptions reads loadlab probe's flags.
func probeOptions(args []string, stdout io.Writer) (probe.Options, error) {
	o := probe.Options{Config: probe.Default()}
	cfg := &o.Config
	fs, parse := newFlagSet("probe", probeSynopsis, stdout)
	fs.StringVar(&cfg.Target, "target", "", "URL to probe (required): http:// or https://, the only URL sent anything")
	fs.StringVar(&cfg.Method, "method", "", "HTTP method of every request (default GET, or POST with a --body)")
	fs.StringVar(&cfg.Body, "body", "", "request body, a Go text/template: {{.ID}} a unique request id, {{.Seq}} its sequence number,\n"+
		"{{json .ID}} the id as a JSON string (as in pipeline files)\n"+
		"(sent with Content-Type application/json unless a --header sets it),\n"+
		`e.g. '{"id":"{{.ID}}","complete":true}'`)
	fs.Func("header", "extra request header 'Name: value' (repeatable)", cfg.AddHeader)
	fs.StringVar(&o.Concurrency, "concurrency", "", "the steps, users in closed loop: numbers and ranges, e.g. 1-16,24,32,48,64\n(default 1 to --max-concurrency, one by one)")
	fs.DurationVar(&cfg.Step, "step", cfg.Step, "measured length of each step")
	fs.DurationVar(&cfg.WarmUp, "warm-up", cfg.WarmUp, "unmeasured warm-up before every step")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-request timeout, from send to the end of the answer (a timeout is counted, not an error)")
	fs.IntVar(&cfg.MaxConcurrency, "max-concurrency", cfg.MaxConcurrency, fmt.Sprintf("most users at once (at most %d); every step must be within it", probe.MaxConcurrencyLimit))
	fs.Float64Var(&cfg.MaxRate, "max-rate", cfg.MaxRate, "most requests per second over all users, ok or not")
	fs.DurationVar(&cfg.MaxDuration, "max-duration", cfg.MaxDuration, "longest the whole probe may take, warm-ups and drains included")
	fs.Float64Var(&cfg.StopRejectionRatio, "stop-rejection-ratio", cfg.StopRejectionRatio, "stop after a step whose rejections exceed this fraction of its requests")
	fs.Float64Var(&cfg.StopErrorRatio, "stop-error-ratio", cfg.StopErrorRatio, "stop after a step whose errors and timeouts exceed this fraction of its requests")
	fs.DurationVar(&cfg.StopP99, "stop-p99", cfg.StopP99, "stop after a step whose p99 latency of successes exceeds this (0: no limit)")
	fs.StringVar(&o.OKStatus, "ok-status", "", "statuses that count as success, comma-separated (default every 2xx)")
	fs.StringVar(&o.RejectStatus, "reject-status", "", "statuses that count as rejections, comma-separated (default 503,429)")
	fs.BoolVar(&o.JSON, "json", false, "print the result as one JSON object (the plan and progress go to stderr)")
	fs.StringVar(&o.Out, "out", "", "also write probe.json, probe.md and probe.html into this folder (created if missing)")
	err := parse(args) // before o is read: the flags write into it
	return o, err
}
