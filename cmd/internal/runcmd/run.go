package runcmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/client/threshold"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/cmd/internal/dashboard"
	"github.com/loadlab/loadlab/mockservice/field"
)

// runFlags maps the fields named in the records package's errors to
// loadlab run's flags.
var runFlags = field.Names{
	"target": "--target", "records": "--records", "call_timeout": "--call-timeout", "permit_timeout": "--permit-timeout",
	"run_id": "--run-id", "time_scale": "--time-scale", "duration": "--duration", "phases": "--phases", "call_urls": "--call-url",
	"strategy.records_in_flight": "--records-in-flight", "strategy.shared_permits": "--shared-permits",
	"strategy.permits": "--permits", "strategy.rates": "--rates", "strategy.adaptive": "--adaptive",
	"strategy.retries": "--retries", "strategy.retries.budget": "--retry-budget",
}

// runOptions is loadlab run's command line.
type runOptions struct {
	cfg                                         records.Config
	strategy                                    cli.Optional[string]
	strategyFile, pipelineFile, faultsFile      string
	permits, rates                              cli.Pairs
	adaptive                                    adaptiveFlag
	metricsAddr, ui                             string
	uiKeep                                      bool
	records                                     cli.Optional[int]
	duration                                    cli.Optional[time.Duration]
	phases                                      phasesFlag
	startAt                                     startFlag
	callURLs                                    cli.Strings
	inFlight, shared, enrichPermits, writePerms cli.Optional[int]
	enrichRate, writeRate                       cli.Optional[float64]
	retries                                     *retryFlagValues
	asJSON                                      bool
	thresholds                                  threshold.Flag
}

// bind declares the flags into o.
func (o *runOptions) bind(fs *flag.FlagSet) {
	o.cfg = records.DefaultConfig()
	fs.StringVar(&o.cfg.Target, "target", o.cfg.Target, "base URL of the mock service")
	o.strategy.V = "C4"
	fs.Var(&o.strategy, "strategy", "C1, C2, C3, C4, C5-aimd or C5-vegas (C4's budgets made adaptive; C5 is C5-aimd), C6, C2-retries,\n"+
		"sequential, bounded:N or unbounded. C4, C5 and C6 budget the lab's enrichment and records by name; with a --pipeline\n"+
		"of your own give --strategy-file (from loadlab advise) or --permits: with neither, run refuses to guess")
	fs.StringVar(&o.pipelineFile, "pipeline", "", "a pipeline file: the dependencies and the steps of one record (default: the lab's,\nclient/pipeline/lab.yaml)")
	fs.StringVar(&o.strategyFile, "strategy-file", "", "a strategy file (what loadlab advise writes); replaces --strategy")
	fs.StringVar(&o.faultsFile, "faults", "", "a faults file: network faults (latency, bandwidth, reset, blackhole, slow_close) between\nthe client and each dependency, through an in-process proxy per dependency")
	fs.Var(&o.adaptive, "adaptive", strategy.AdaptiveUsage)
	o.retries = retryFlags(fs)
	o.permits.Check = wholePermits
	fs.Var(&o.permits, "permits", "override, key by key: per-dependency permits by the pipeline's names, e.g. geo=8,ledger=6\n(0 removes one)")
	fs.Var(&o.rates, "rates", "override, key by key: per-dependency calls per lab second (real calls/s × --time-scale),\ne.g. geo=100 (0 removes one)")
	o.records.V = o.cfg.Records
	fs.Var(&o.records, "records", "records in the batch; with --duration or --phases, a cap (then 1000000 unless given)")
	fs.Float64Var(&o.cfg.TimeScale, "time-scale", o.cfg.TimeScale, "multiplies every client-side duration; give the mock service the same --time-scale")
	fs.DurationVar(&o.cfg.CallTimeout, "call-timeout", o.cfg.CallTimeout, "timeout of one call, from when its permit is held (before the time scale)")
	fs.DurationVar(&o.cfg.PermitTimeout, "permit-timeout", o.cfg.PermitTimeout, "how long a call may wait for a rate token and then a permit, together (before the time scale)")
	fs.Var(&o.inFlight, "records-in-flight", "override the strategy's records in flight (0: runtime default GOMAXPROCS, -1: all)")
	fs.Var(&o.shared, "shared-permits", "override: one budget of N permits for every call")
	fs.Var(&o.enrichPermits, "enrichment-permits", "override: enrichment budget")
	fs.Var(&o.writePerms, "write-permits", "override: write budget")
	fs.Var(&o.enrichRate, "enrichment-rate", "cap enrichment calls per second (0: none)")
	fs.Var(&o.writeRate, "write-rate", "cap writes per second (0: none)")
	fs.BoolVar(&o.cfg.Reset, "reset", true, "reset a loadlab mock service before the run, so its high-water marks are this run's (skipped for another target)")
	fs.StringVar(&o.cfg.Profile, "profile", "", "switch the loadlab mock service to this profile before the run (healthy, slow-enrichment, slow-write)")
	fs.StringVar(&o.cfg.AdminToken, "admin-token", "", "bearer token for the mock service's admin routes")
	fs.DurationVar(&o.cfg.Wait, "wait", 0, "keep asking a target (and a pipeline's own services) that does not accept connections yet for up to\nthis long (e.g. 10s for a mock service started just before); 0 asks once")
	fs.StringVar(&o.cfg.RunID, "run-id", "", "prefix of record ids (default: the start time)")
	fs.DurationVar(&o.cfg.SampleInterval, "sample-interval", 0, "sample calls in flight this often (real time) into the JSON's timeline; 0 off")
	fs.Var(&o.duration, "duration", "bound the run in lab time (before the time scale), e.g. 40s: records keep coming, as slots free,\n"+
		"until D has passed since the run's clock started, then those in progress finish; --records stays a cap (when\n"+
		"--duration is given and --records is not, the cap is 1000000); 0: a batch of --records")
	fs.Var(&o.phases, "phases", "name=D,name=D,...: divide a time-bounded run into named phases of lab time, e.g.\n"+
		"before=10s,drop=20s,after=10s, for figures per phase (records that end after the last are in the phase\n"+
		"\"drain\"); sets --duration to their sum when it is absent, and must add up to it when given")
	fs.Var(&o.startAt, "start-at", "start the run's clock at this wall-clock time, after identification (and profile and reset): RFC 3339\n"+
		"with nanoseconds, e.g. from date -u +%Y-%m-%dT%H:%M:%S.%NZ; a time already past starts at once, and the result\n"+
		"says how late (start_late_seconds)")
	o.callURLs.Form = "dep=URL"
	fs.Var(&o.callURLs, "call-url", "dep=URL[,dep=URL]: send a dependency's calls to this base URL instead (identification, admin and\n"+
		"metrics requests still go to --target); with --faults, the fault proxy forwards to it")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as one JSON object")
	figures, _ := runFigures(records.Result{})
	o.thresholds.Names = append(threshold.Names(figures), "rejected.NAME")
	fs.Var(&o.thresholds, "threshold", threshold.Usage("records (of the calls for rejected)", "rejected<1%, write_unknown==0, accepted_per_second>50",
		"rejected (calls refused, 429/503, at any step: an optional step's too, whose record ends incomplete),\nrejected.NAME (dependency NAME's, % of its calls), records_rejected (write_rejected + step_rejected:\nrecords refused) or accepted_per_second (per lab second)"))
	fs.StringVar(&o.ui, "ui", "", dashboard.Flag)
	fs.BoolVar(&o.uiKeep, "ui-keep", false, dashboard.KeepFlag)
	fs.StringVar(&o.metricsAddr, "metrics-listen", "", "serve the budgets' Prometheus metrics (calls in flight, permit waits, classes) on this address during the run")
}

// Main is loadlab run: one batch of records (or a time-bounded run) under
// a strategy, against the lab's mock service or a pipeline of one's own.
func Main(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet(stdout)
	var o runOptions
	o.bind(fs)
	if err := parse(args); err != nil {
		return err
	}
	if err := checkURL("run", "--target", o.cfg.Target); err != nil {
		return err
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if err := o.preflight(cfg); err != nil {
		return err
	}
	if o.faultsFile != "" {
		proxies, err := faults.StartFile(o.faultsFile, cfg.CallBases())
		if err != nil {
			return usageErr("run: --faults: %v", err)
		}
		defer proxies.Stop()
		cfg.CallURLs = proxies.URLs
	}
	// Ctrl-C drains: no new record; those in flight finish. Again: abort.
	s, err := cli.Begin(o.metricsAddr, nil, os.Stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg.Registerer, cfg.Stop = s.Registerer, s.Stop
	ui, err := dashboard.Serve(o.ui, o.uiKeep, "run", fmt.Sprintf("Run: %s, %d records", cfg.Strategy.Name, cfg.Records), os.Stderr)
	if err != nil {
		return err
	}
	if ui != nil && cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	watch, stopWatch := context.WithCancel(s.Ctx)
	ui.WatchRecords(watch, cfg)
	res, err := records.Run(s.Ctx, cfg)
	stopWatch()
	err = o.finish(stdout, res, err)
	if err == nil || res.Records > 0 {
		figures, _ := runFigures(res)
		ui.Figures(figures)
	}
	ui.End(err, "")
	return err
}

// config is the run the flags describe: the pipeline, the strategy (a
// file, a name, or the pipeline's default) with the flags' overrides, the
// time flags; validated before anything starts.
func (o *runOptions) config() (records.Config, error) {
	cfg := o.cfg
	if o.pipelineFile != "" {
		p, err := pipeline.Load(o.pipelineFile)
		if err != nil {
			return cfg, usageErr("run: --pipeline: %v", err)
		}
		cfg.Pipeline = p
	}
	p := cfg.PipelineOrLab()
	if err := o.thresholds.Each("rejected", p.Names()); err != nil {
		return cfg, usageErr("run: --threshold %v", err)
	}
	var s strategy.Strategy
	var err error
	switch {
	case o.strategyFile != "" && o.strategy.Given:
		return cfg, usageErr("run: --strategy and --strategy-file: give one")
	case o.strategyFile != "":
		if s, err = strategy.LoadFile(o.strategyFile, p); err != nil {
			return cfg, usageErr("run: --strategy-file: %v", err)
		}
	case o.strategy.Given:
		s, err = strategy.Parse(o.strategy.V)
		if err == nil && s.Fits(p) != nil && o.permits.M == nil && !o.shared.Given {
			return cfg, usageErr("run: --strategy %s: its budgets are the lab's, for enrichment and records; pipeline %s has %s: "+
				"give budgets for those with --permits %s, or run the strategy file loadlab advise writes (--strategy-file)",
				o.strategy.V, p.Name, strings.Join(p.Names(), ", "), examplePermits(p))
		}
	default:
		if c4, _ := strategy.Parse("C4"); c4.Fits(p) != nil && o.permits.M == nil && !o.shared.Given {
			return cfg, usageErr("run: --pipeline %s: which strategy? Nothing bounds the calls to your services unless you say how: "+
				"probe each dependency and let advise size the budgets (loadlab probe --target URL --json > DEP.json, once per dependency; "+
				"loadlab advise --pipeline %[1]s --probe DEP=DEP.json ... --out advised.yaml), then --strategy-file advised.yaml; "+
				"or give budgets, --permits %s; or --strategy C2 (%d records in flight, no budget: it can overload them)",
				o.pipelineFile, examplePermits(p), strategy.DefaultRecordsInFlight)
		}
		s = strategy.Default(p)
	}
	if err != nil {
		return cfg, usageErr("run: %v", err)
	}
	over, names, err := o.overrides(p)
	if err != nil {
		return cfg, err
	}
	if cfg.Strategy, err = s.With(over, p); err != nil {
		return cfg, usageErr("run: %v", names.Rename(err))
	}
	o.timeFlags(&cfg)
	if err := cfg.Validate(); err != nil { // before the fault proxies start
		return cfg, usageErr("%v", runFlags.Rename(err))
	}
	return cfg, nil
}

// runFigures are what a run's --threshold can name, and what a percentage
// of each is of: its JSON's numbers and records_rejected (write_rejected +
// step_rejected), of the records; rejected, the calls refused at any step,
// of the calls made, rejected.NAME of NAME's; accepted_per_second (per
// lab second: per second at time scale 1).
func runFigures(r records.Result) (map[string]float64, threshold.Totals) {
	f, of := threshold.Figures(r), map[string]float64{"rejected": 0}
	f["step_rejected"] = float64(r.StepRejected) // omitted from the JSON when 0
	f["records_rejected"], f["accepted_per_second"], f["rejected"] = float64(r.WriteRejected+r.StepRejected), r.AcceptedPerLabSecond, 0
	for dep, byClass := range r.Calls {
		f["rejected."+dep] += 0
		for class, n := range byClass {
			of["rejected"], of["rejected."+dep] = of["rejected"]+float64(n), of["rejected."+dep]+float64(n)
			if class == budgets.Rejected {
				f["rejected"], f["rejected."+dep] = f["rejected"]+float64(n), f["rejected."+dep]+float64(n)
			}
		}
	}
	return f, threshold.Totals{Default: float64(r.Records), Of: of}
}

// examplePermits is --permits' form for p's dependencies: lookup=N,ledger=N.
func examplePermits(p *pipeline.Pipeline) string {
	var kv []string
	for _, d := range p.Dependencies {
		kv = append(kv, d.Name+"=N")
	}
	return strings.Join(kv, ",")
}

// report prints the result (as JSON with --json), an overload first, and
// says how the run ended.
func (o *runOptions) report(stdout io.Writer, res records.Result) error {
	out := stdout
	if o.asJSON {
		out = os.Stderr
	}
	figures, totals := runFigures(res)
	if line := overload(res, figures, totals, len(o.thresholds.List) > 0); line != "" {
		fmt.Fprintln(out, line) // before the headline, whose rate counts the accepted only
	}
	var err error
	if o.asJSON {
		err = writeJSON(stdout, res)
	} else {
		err = records.WriteResult(stdout, res)
	}
	if err != nil {
		return err
	}
	thresholdErr := threshold.Report(out, "run", o.thresholds.List, figures, totals)
	switch {
	case res.Partial && res.DurationLimit > 0:
		return interrupted(fmt.Errorf("run: %d records begun, stopped %.2f of %g lab s in", res.Records, res.DurationSeconds/res.TimeScale, res.DurationLimit), "")
	case res.Partial:
		return interrupted(fmt.Errorf("run: %d of %d records not started", res.NotStarted, res.Records), "")
	case thresholdErr != nil:
		return thresholdErr
	case res.Trouble() != "":
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("run: %s", res.Trouble())}
	}
	return nil
}

// overload says, of a run whose calls were refused (f and totals its
// runFigures), how many (and its
// records), that its rate counts the accepted ones only, and how refusals
// are made to fail it: they are what the run measured, so alone they exit 0.
func overload(r records.Result, f map[string]float64, totals threshold.Totals, thresholds bool) string {
	if f["rejected"] == 0 || r.Records == 0 {
		return ""
	}
	var each []string
	for _, dep := range slices.Sorted(maps.Keys(r.Calls)) {
		if n := f["rejected."+dep]; n > 0 {
			each = append(each, fmt.Sprintf("%s %.0f", dep, n))
		}
	}
	line := fmt.Sprintf("OVERLOAD: %.0f of %.0f calls (%.1f%%) refused (%s); %.0f of %d records refused (write_rejected %d, step_rejected %d); "+
		"the rate counts the %d accepted only (%d incomplete). Budgets avoid refusals (loadlab probe, then advise)", f["rejected"], totals.Of["rejected"],
		100*f["rejected"]/totals.Of["rejected"], strings.Join(each, ", "), f["records_rejected"], r.Records, r.WriteRejected, r.StepRejected,
		r.Complete+r.Incomplete, r.Incomplete)
	if !thresholds {
		line += "; refusals alone exit 0: --threshold 'rejected<1%' makes them exit 99"
	}
	return line + "."
}

// timeFlags reads --duration, --phases, --start-at and --call-url into
// cfg: phases set the duration when it was not given, and a time-bounded
// run's records are a cap of 1000000 unless given.
func (o *runOptions) timeFlags(cfg *records.Config) {
	cfg.Records, cfg.Duration, cfg.Phases = o.records.V, o.duration.V, o.phases.list
	if len(cfg.Phases) > 0 && !o.duration.Given {
		cfg.Duration = 0
		for _, p := range cfg.Phases {
			cfg.Duration += p.Duration
		}
	}
	if (o.duration.Given || len(cfg.Phases) > 0) && !o.records.Given {
		cfg.Records = records.MaxRecords
	}
	cfg.StartAt, cfg.CallURLs = o.startAt.t, o.callURLs.M
}
