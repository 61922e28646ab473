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

var probeSynopsis = synopsis("probe")

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
	fs.Var(cli.Parse(&cfg.Concurrency, "", probe.ParseConcurrency), "concurrency", "the steps, users in closed loop: numbers and ranges, e.g. 1-16,24,32,48,64\n(default 1 to --max-concurrency, one by one)")
	fs.DurationVar(&cfg.Step, "step", cfg.Step, "measured length of each step")
	fs.DurationVar(&cfg.WarmUp, "warm-up", cfg.WarmUp, "unmeasured warm-up before every step")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-request timeout, from send to the end of the answer (a timeout is counted, not an error)")
	fs.IntVar(&cfg.MaxConcurrency, "max-concurrency", cfg.MaxConcurrency, fmt.Sprintf("most users at once (at most %d); every step must be within it", probe.MaxConcurrencyLimit))
	fs.Float64Var(&cfg.MaxRate, "max-rate", cfg.MaxRate, "most requests per second over all users, ok or not")
	fs.DurationVar(&cfg.MaxDuration, "max-duration", cfg.MaxDuration, "longest the whole probe may take, warm-ups and drains included")
	fs.Float64Var(&cfg.StopRejectionRatio, "stop-rejection-ratio", cfg.StopRejectionRatio, "stop after a step whose rejections exceed this fraction of its requests")
	fs.Float64Var(&cfg.StopErrorRatio, "stop-error-ratio", cfg.StopErrorRatio, "stop after a step whose errors and timeouts exceed this fraction of its requests")
	fs.DurationVar(&cfg.StopP99, "stop-p99", cfg.StopP99, "stop after a step whose p99 latency of successes exceeds this (0: no limit)")
	fs.Var(cli.Parse(&cfg.OKStatuses, "", probe.ParseStatuses), "ok-status", "statuses that count as success, comma-separated (default every 2xx)")
	fs.Var(cli.Parse(&cfg.RejectStatuses, "", probe.ParseStatuses), "reject-status", "statuses that count as rejections, comma-separated (default 503,429)")
	fs.BoolVar(&o.JSON, "json", false, "print the result as one JSON object (the plan and progress go to stderr)")
	fs.StringVar(&o.Out, "out", "", "also write probe.json, probe.md and probe.html into this folder (created if missing)")
	err := parse(args) // before o is read: the flags write into it
	return o, err
}
