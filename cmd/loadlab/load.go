package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/client/threshold"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/cmd/internal/dashboard"
	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
)

var loadSynopsis = synopsis("load")

// loadOptions is loadlab load's command line.
type loadOptions struct {
	run             compare.AdmissionLoad
	metricsAddr, ui string
	uiKeep          bool
	asJSON          bool
	thresholds      threshold.Flag
}

func runLoad(args []string, stdout io.Writer) error {
	o, err := parseLoad(args, stdout)
	if err != nil {
		return err
	}
	ctx, reg, done, err := begin(o.metricsAddr, admissionNames.Rename(o.validate()))
	if err != nil {
		return err
	}
	defer done()
	cfg := &o.run.Config
	cfg.Registerer = reg
	if cfg.Target == "" {
		_, url, shutdown, err := mockservice.Start(compare.AdmissionEndpoint(o.run.Scenario, cfg.TimeScale, cfg.TieWindow))
		if err != nil {
			return err
		}
		defer shutdown()
		cfg.Target = url + api.PathEnrich
	}
	if isTerminal(os.Stderr) {
		cfg.Progress = printProgress
	}
	ui, err := dashboard.Serve(o.ui, o.uiKeep, "load", "Load: "+cfg.Target, os.Stderr)
	if err != nil {
		return err
	}
	if ui != nil {
		cfg.Progress = ui.LoadProgress(cfg.Progress)
	}
	err = o.load(ctx, stdout, ui)
	ui.End(err, "")
	return err
}

// load runs the load and reports it.
func (o loadOptions) load(ctx context.Context, stdout io.Writer, ui *dashboard.Server) error {
	res, err := compare.RunAdmissionLoad(ctx, o.run)
	if isTerminal(os.Stderr) {
		fmt.Fprintln(os.Stderr)
	}
	if errors.Is(err, loadgen.ErrAdmin) {
		return usageErr("%v (give --admin-token)", err)
	}
	if errors.Is(err, loadgen.ErrTargetUnreachable) || errors.Is(err, loadgen.ErrTimeScaleMismatch) || errors.Is(err, loadgen.ErrStartPassed) {
		return usageErr("%v", admissionNames.Rename(err))
	}
	if err != nil {
		return err
	}
	ui.Figures(loadresult.Figures(res.Result))
	if err := writeLoad(stdout, res, o.asJSON); err != nil {
		return err
	}
	out := stdout
	if o.asJSON {
		out = os.Stderr
		if res.Saturated {
			fmt.Fprintln(os.Stderr, "load: "+loadresult.Saturation(res.Result))
		}
	}
	if err := threshold.Report(out, "load", o.thresholds.List, loadresult.Figures(res.Result), threshold.Totals{Default: float64(res.Requests)}); err != nil && !res.Partial {
		return err
	}
	return loadExit(o.run.Generator(), res.Result)
}

// parseLoad reads loadlab load's flags into its options.
func parseLoad(args []string, stdout io.Writer) (loadOptions, error) {
	o := loadOptions{run: compare.AdmissionLoad{Scenario: models.DefaultAdmissionScenario(),
		Config: loadgen.Config{Arrivals: loadgen.ArrivalsStep, TimeScale: 1, LateThreshold: loadgen.DefaultLateThreshold}}}
	cfg := &o.run.Config
	fs, parse := newFlagSet("load", loadSynopsis, stdout)
	admissionFlags(fs, &o.run.Scenario)
	fs.StringVar(&cfg.Target, "target", "", "URL to POST each request to (default: an in-process mock station's /enrich)")
	fs.StringVar((*string)(&cfg.Client), "client", string(loadgen.ClientFastHTTP), "HTTP client: fasthttp (a connection per sender, less CPU per request) or net/http (a shared pool)")
	fs.StringVar((*string)(&cfg.Arrivals), "arrivals", string(cfg.Arrivals), "open: step (a second's arrivals at its start, as the model) or uniform (evenly spaced)")
	fs.Float64Var(&cfg.TimeScale, "time-scale", cfg.TimeScale, "real seconds per model second (0.1 runs ten times faster)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", 0, "cap on requests awaiting an outcome (the pool of senders); arrivals beyond it are dropped and counted\n(0: the most the schedule can have awaiting an outcome, peak rate × (timeout + 1) or the users, at most 10000)")
	fs.Float64Var(&cfg.LateThreshold, "late-threshold", cfg.LateThreshold, "model seconds after its schedule past which an open arrival is behind (not sent, counted) and a\nrequest written is a late start")
	tie := fs.Float64("tie-window", -1, "model seconds within which events count as simultaneous, in the model's order\n(completions, then give-ups, then arrivals); default 0.1 with step arrivals, 0 with uniform")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "bearer token of the target's admin routes (request log)")
	fs.DurationVar(&cfg.Wait, "wait", 0, "keep asking a target that does not accept connections yet for up to this long; 0 asks once")
	fs.StringVar(&o.ui, "ui", "", dashboard.Flag)
	fs.BoolVar(&o.uiKeep, "ui-keep", false, dashboard.KeepFlag)
	fs.StringVar(&o.metricsAddr, "metrics-listen", "", "serve the generator's Prometheus metrics on this address during the run")
	fs.BoolVar(&o.run.Model, "compare-model", false, "also run the admission model with the same parameters and print both side by side")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as one JSON object (with \"model\" when --compare-model)")
	o.thresholds.Names = threshold.Names(loadresult.Figures(loadgen.Result{}))
	fs.Var(&o.thresholds, "threshold", threshold.Usage("requests", "on_time>=99%, rejected==0, p99_ms<300",
		"p50_ms, p90_ms, p95_ms, p99_ms, max_ms\n(latency from the scheduled time of the requests answered on time, in lab ms)"))
	segment := partFlag(&cfg.Segment, loadgen.ParseSegment)
	fs.Var(segment, "segment", "i/n: send only segment i of n of the schedule (open arrivals i, i+n, …; closed users i, i+n, …),\n"+
		"one of n generators sharing --target and --start-at; merge their --json results with loadlab merge")
	fs.Var(cli.Parse(&cfg.StartAt, "", parseStartAt), "start-at", "begin model second 0 at this wall-clock time (RFC 3339 with nanoseconds, e.g. from\n"+
		"date -u -d +20sec +%Y-%m-%dT%H:%M:%S.%NZ), after identifying (and resetting) the target; a time already\n"+
		"past when the generator is ready exits 2, nothing sent; required with --segment i/n when n > 1")
	if err := parse(args); err != nil {
		return o, err
	}
	if err := checkURL("load", "--target", cfg.Target); err != nil {
		return o, err
	}
	if cfg.Segment.Count > 1 {
		switch {
		case cfg.StartAt.IsZero():
			return o, usageErr("load: --segment %s needs --start-at: the %d generators must begin the shared schedule at one moment "+
				"(an RFC 3339 time a little ahead, the same for every segment)", segment, cfg.Segment.Count)
		case cfg.Target == "":
			return o, usageErr("load: --segment %s: the segments must share one target: give --target (without it each would start an endpoint of its own)", cfg.Segment)
		case o.run.Model:
			return o, usageErr("load: --segment %s: --compare-model compares the whole schedule: merge the segments (loadlab merge), then compare", cfg.Segment)
		}
	}
	cfg.TieWindow = *tie
	if *tie < 0 {
		cfg.TieWindow = loadgen.DefaultTieWindow(cfg.Arrivals)
	}
	return o, nil
}

// validate checks the options before anything starts; without --target,
// the in-process endpoint's URL stands in for the target.
func (o loadOptions) validate() error {
	run := o.run
	if run.Config.Target == "" {
		run.Config.Target = "http://127.0.0.1:1/enrich" // placeholder, for validation only
	}
	return run.Validate()
}

// printProgress shows a run's progress on one line of the terminal.
func printProgress(p loadgen.Progress) {
	fmt.Fprintf(os.Stderr, "\r%3.0f/%.0f s  sent %d  on time %d  rejected %d  gave up %d  dropped %d ",
		p.Elapsed, p.Duration, p.Sent, p.Replies[loadgen.ReplyOnTime], p.Replies[loadgen.ReplyRejected],
		p.Replies[loadgen.ReplyGaveUp], p.Dropped)
}

// loadExit is the exit of a load whose result was printed: 130 when it
// was interrupted, 1 when requests failed.
func loadExit(cfg loadgen.Config, res loadgen.Result) error {
	switch {
	case res.Partial:
		return interrupted(fmt.Errorf("load: %d of %s arrivals scheduled before it", res.Scheduled, scheduledTotal(cfg.Schedule, cfg.Segment)), "")
	case res.TransportErrors+res.ErrorStatus > 0:
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("load: %d requests failed: %d transport errors, %d error statuses %v",
			res.TransportErrors+res.ErrorStatus, res.TransportErrors, res.ErrorStatus, res.StatusCodes)}
	}
	return nil
}

// scheduledTotal is how many arrivals the whole run (a segment: its share)
// would have had, or "?" for closed users.
func scheduledTotal(sc loadgen.Schedule, seg loadgen.Segment) string {
	if sc.Mode != loadgen.Open {
		return "?"
	}
	return fmt.Sprint(loadgen.SegmentArrivals(sc, seg))
}

// parseStartAt reads --start-at: an RFC 3339 time.
func parseStartAt(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("%q is not an RFC 3339 time (e.g. 2026-12-01T10:00:00.123456789Z)", s)
	}
	return t, nil
}

// writeLoad prints the result, for people or as JSON, with the model's
// beside it when there is one.
func writeLoad(stdout io.Writer, res compare.AdmissionResult, asJSON bool) error {
	if asJSON {
		return writeJSON(stdout, res)
	}
	return compare.WriteAdmissionResult(stdout, res)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
