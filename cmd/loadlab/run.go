package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
)

func runRecords(args []string, stdout io.Writer) error {
	cfg := records.DefaultConfig()
	fs, parse := newFlagSet("run",
		"Processes a batch of records against a running mock service (make mock, or go run ./cmd/mockservice\n"+
			"--time-scale S with the same S as --time-scale here), or against your own services with --pipeline FILE.\n"+
			"The default pipeline is the lab's (client/pipeline/lab.yaml): 3 enrichment calls, then 1 write.\n"+
			"The target is asked first, with OPTIONS on the first dependency's path (/enrich), whether it is a loadlab\n"+
			"mock service; only then are its profile, reset and metrics routes used. Any other target is sent the\n"+
			"records' calls and nothing else, and the figures are the client's own. Dependencies with a base_url of\n"+
			"their own are sent their calls only.\n\n"+
			"Time-bounded runs (--duration, --phases): records keep coming, as slots free, until the duration (lab time)\n"+
			"has passed since the run's clock started; then no record begins and those in progress finish (the drain). The\n"+
			"records are those begun. With --phases, the result has figures per phase (and for the drain); with either,\n"+
			"counts per lab second. --start-at lets another process (the experiment runner) share the clock's origin.\n\n"+
			"Exit codes: 0 every record ended cleanly (complete, incomplete or write_rejected); 1 records failed\n"+
			"(failed, write_unknown, or calls with transport errors or unexpected statuses); 2 bad input, an\n"+
			"unreachable target, a mock at another time scale, or an admin request refused (nothing sent);\n"+
			"130 interrupted (SIGINT or SIGTERM): what was measured is printed, marked partial.\n", stdout)
	fs.StringVar(&cfg.Target, "target", cfg.Target, "base URL of the mock service")
	strategy := fs.String("strategy", "C4", "C1, C2, C3, C4, C5-aimd or C5-vegas (C4's budgets made adaptive; C5 is C5-aimd), sequential, bounded:N or\n"+
		"unbounded (with a --pipeline that lacks the lab's enrichment and records the default is C2: C4's budgets name those;\ngive yours with --permits)")
	pipelineFile := fs.String("pipeline", "", "a pipeline file: the dependencies and the steps of one record (default: the lab's,\nclient/pipeline/lab.yaml)")
	strategyFile := fs.String("strategy-file", "", "a strategy file (what loadlab advise writes); replaces --strategy")
	faultsFile := fs.String("faults", "", "a faults file: network faults (latency, bandwidth, reset, blackhole, slow_close) between\nthe client and each dependency, through an in-process proxy per dependency")
	adaptive := fs.String("adaptive", "", adaptiveUsage)
	retries := retryFlags(fs)
	permits := fs.String("permits", "", "override, key by key: per-dependency permits by the pipeline's names, e.g. geo=8,ledger=6\n(0 removes one)")
	rates := fs.String("rates", "", "override, key by key: per-dependency calls per lab second (real calls/s × --time-scale),\ne.g. geo=100 (0 removes one)")
	fs.IntVar(&cfg.Records, "records", cfg.Records, "records in the batch; with --duration or --phases, a cap (then 1000000 unless given)")
	fs.Float64Var(&cfg.TimeScale, "time-scale", cfg.TimeScale, "multiplies every client-side duration; give the mock service the same --time-scale")
	fs.DurationVar(&cfg.CallTimeout, "call-timeout", cfg.CallTimeout, "timeout of one call, from when its permit is held (before the time scale)")
	fs.DurationVar(&cfg.PermitTimeout, "permit-timeout", cfg.PermitTimeout, "how long a call may wait for a rate token and then a permit, together (before the time scale)")
	inFlight := fs.Int("records-in-flight", 0, "override the strategy's records in flight (0: runtime default GOMAXPROCS, -1: all)")
	shared := fs.Int("shared-permits", 0, "override: one budget of N permits for every call")
	enrich := fs.Int("enrichment-permits", 0, "override: enrichment budget")
	writes := fs.Int("write-permits", 0, "override: write budget")
	enrichRate := fs.Float64("enrichment-rate", 0, "cap enrichment calls per second (0: none)")
	writeRate := fs.Float64("write-rate", 0, "cap writes per second (0: none)")
	fs.BoolVar(&cfg.Reset, "reset", true, "reset a loadlab mock service before the run, so its high-water marks are this run's (skipped for another target)")
	fs.StringVar(&cfg.Profile, "profile", "", "switch the loadlab mock service to this profile before the run (healthy, slow-enrichment, slow-write)")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "bearer token for the mock service's admin routes")
	fs.DurationVar(&cfg.Wait, "wait", 0, "keep asking a target that does not accept connections yet for up to this long (e.g. 10s for a mock\nservice started just before); 0 asks once")
	fs.StringVar(&cfg.RunID, "run-id", "", "prefix of record ids (default: the start time)")
	fs.DurationVar(&cfg.SampleInterval, "sample-interval", 0, "sample calls in flight this often (real time) into the JSON's timeline; 0 off")
	fs.DurationVar(&cfg.Duration, "duration", 0, "bound the run in lab time (before the time scale), e.g. 40s: records keep coming, as slots free,\n"+
		"until D has passed since the run's clock started, then those in progress finish; --records stays a cap (when\n"+
		"--duration is given and --records is not, the cap is 1000000); 0: a batch of --records")
	phases := fs.String("phases", "", "name=D,name=D,...: divide a time-bounded run into named phases of lab time, e.g.\n"+
		"before=10s,drop=20s,after=10s, for figures per phase (records that end after the last are in the phase\n"+
		"\"drain\"); sets --duration to their sum when it is absent, and must add up to it when given")
	startAt := fs.String("start-at", "", "start the run's clock at this wall-clock time, after identification (and profile and reset): RFC 3339\n"+
		"with nanoseconds, e.g. from date -u +%Y-%m-%dT%H:%M:%S.%NZ; a time already past starts at once, and the result\n"+
		"says how late (start_late_seconds)")
	callURLs := fs.String("call-url", "", "dep=URL[,dep=URL]: send a dependency's calls to this base URL instead (identification, admin and\n"+
		"metrics requests still go to --target); with --faults, the fault proxy forwards to it")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	metricsAddr := fs.String("metrics-listen", "", "serve the budgets' Prometheus metrics (calls in flight, permit waits, classes) on this address during the run")
	if err := parse(args); err != nil {
		return err
	}
	if *pipelineFile != "" {
		p, err := pipeline.Load(*pipelineFile)
		if err != nil {
			return usageErr("run: --pipeline: %v", err)
		}
		cfg.Pipeline = p
	}
	var s records.Strategy
	var err error
	strategyGiven := false
	fs.Visit(func(f *flag.Flag) { strategyGiven = strategyGiven || f.Name == "strategy" })
	if *strategyFile != "" {
		if strategyGiven {
			return usageErr("run: --strategy and --strategy-file: give one")
		}
		s, err = records.LoadStrategyFile(*strategyFile, cfg.PipelineOrLab())
	} else {
		s, err = records.ParseStrategy(*strategy)
		if cfg.Pipeline != nil && !strategyGiven && s.Fits(cfg.Pipeline) != nil {
			// C4's budgets name the lab's dependencies: a pipeline without
			// them runs C2 unless budgets come by name (--permits).
			s, err = records.ParseStrategy("C2")
		}
	}
	if err != nil {
		return usageErr("run: %v", err)
	}
	// One source for the budgets: the lab's four flags and --permits,
	// --rates all change the strategy's per-dependency maps, key by key.
	s = s.Normalized()
	var flagErr error
	setPermits := func(flagName, dep string, n int) {
		switch {
		case n < 0:
			flagErr = errors.Join(flagErr, fmt.Errorf("%s: %d must be ≥ 1 (or 0 for none)", flagName, n))
		case n == 0:
			delete(s.Permits, dep)
		default:
			s.Permits[dep] = n
		}
	}
	setRate := func(dep string, r float64) {
		if r == 0 {
			delete(s.Rates, dep)
		} else {
			s.Rates[dep] = r
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "records-in-flight":
			s.RecordsInFlight = *inFlight
		case "shared-permits":
			s.SharedPermits = *shared
		case "enrichment-permits", "write-permits", "enrichment-rate", "write-rate":
			dep := map[string]string{"enrichment-permits": records.Enrichment, "enrichment-rate": records.Enrichment}[f.Name]
			if dep == "" {
				dep = records.Records
			}
			if p := cfg.PipelineOrLab(); p.Dependency(dep) == nil {
				flagErr = errors.Join(flagErr, fmt.Errorf("--%s: names the lab's %s, which pipeline %s lacks: give yours by name, e.g. --permits %s=N or --rates %s=R",
					f.Name, dep, p.Name, p.Write(), p.Write()))
				return
			}
			switch f.Name {
			case "enrichment-permits":
				setPermits(f.Name, dep, *enrich)
			case "write-permits":
				setPermits(f.Name, dep, *writes)
			case "enrichment-rate":
				setRate(dep, *enrichRate)
			case "write-rate":
				setRate(dep, *writeRate)
			}
		case "permits":
			flagErr = errors.Join(flagErr, parsePairs("permits", *permits, func(k string, v float64) error {
				if v != math.Trunc(v) || v < 0 {
					return fmt.Errorf("%v is not a whole number ≥ 0", v)
				}
				setPermits("permits", k, int(v))
				return nil
			}))
		case "rates":
			flagErr = errors.Join(flagErr, parsePairs("rates", *rates, func(k string, v float64) error { setRate(k, v); return nil }))
		}
	})
	if *adaptive != "" {
		flagErr = errors.Join(flagErr, parseAdaptive(*adaptive, &s))
	}
	flagErr = errors.Join(flagErr, retries.apply(fs, &s))
	if flagErr != nil {
		return usageErr("run: %v", flagErr)
	}
	cfg.Strategy = s
	if err := timeFlags(fs, &cfg, *phases, *startAt, *callURLs); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil { // before the fault proxies start
		return usageErr("%v", err)
	}
	if cfg.RunID == "" {
		cfg.RunID = time.Now().UTC().Format("20060102T150405.000-")
	}
	var proxies *faults.Proxies
	if *faultsFile != "" {
		if proxies, err = startFaults(*faultsFile, cfg); err != nil {
			return usageErr("run: --faults: %v", err)
		}
		defer proxies.Stop()
		cfg.CallURLs = proxies.URLs
	}
	ctx, reg, done, err := begin(*metricsAddr, cfg.Validate())
	if err != nil {
		return err
	}
	defer done()
	cfg.Registerer = reg
	res, err := records.Run(ctx, cfg)
	for _, e := range []error{records.ErrUnreachable, records.ErrTimeScaleMismatch, records.ErrNotMock, records.ErrAdmin} {
		if errors.Is(err, e) {
			return usageErr("%v", err)
		}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		err = writeJSON(stdout, res)
	} else {
		err = records.WriteResult(stdout, res)
	}
	if err != nil {
		return err
	}
	switch {
	case res.Partial && res.DurationLimit > 0:
		return interrupted(fmt.Errorf("run: %d records begun, stopped %.2f of %g lab s in", res.Records, res.DurationSeconds/res.TimeScale, res.DurationLimit))
	case res.Partial:
		return interrupted(fmt.Errorf("run: %d of %d records not started", res.NotStarted, res.Records))
	case res.Trouble() != "":
		return &exitError{code: exitFailed, err: fmt.Errorf("run: %s", res.Trouble())}
	}
	return nil
}

// parsePairs reads a flag of name=value pairs, comma-separated.
func parsePairs(flagName, text string, set func(name string, v float64) error) error {
	for _, kv := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil {
			return fmt.Errorf("--%s: %q is not name=number", flagName, kv)
		}
		if err := set(k, x); err != nil {
			return fmt.Errorf("--%s: %s: %v", flagName, k, err)
		}
	}
	return nil
}

// startFaults starts a fault proxy in front of every dependency of the
// run's pipeline, with the file's faults.
func startFaults(file string, cfg records.Config) (*faults.Proxies, error) {
	fs, err := faults.Load(file)
	if err != nil {
		return nil, err
	}
	up := map[string]string{}
	for _, d := range cfg.PipelineOrLab().Dependencies {
		up[d.Name] = d.BaseURL
		if d.BaseURL == "" {
			up[d.Name] = cfg.Target
		}
		if u, ok := cfg.CallURLs[d.Name]; ok { // --call-url: the proxy goes in front of it
			up[d.Name] = u
		}
	}
	return faults.Start(up, fs)
}

// timeFlags reads --duration, --phases, --start-at and --call-url into cfg.
func timeFlags(fs *flag.FlagSet, cfg *records.Config, phases, startAt, callURLs string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if phases != "" {
		for _, kv := range strings.Split(phases, ",") {
			name, d, ok := strings.Cut(strings.TrimSpace(kv), "=")
			dur, err := time.ParseDuration(d)
			if !ok || err != nil {
				return usageErr("run: --phases: %q is not name=duration (e.g. before=10s)", kv)
			}
			cfg.Phases = append(cfg.Phases, records.Phase{Name: name, Duration: dur})
		}
		if !given["duration"] {
			cfg.Duration = 0
			for _, p := range cfg.Phases {
				cfg.Duration += p.Duration
			}
		}
	}
	if (given["duration"] || phases != "") && !given["records"] {
		cfg.Records = records.MaxRecords
	}
	if startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, startAt)
		if err != nil {
			return usageErr("run: --start-at: %q is not an RFC 3339 time (e.g. 2026-12-01T10:00:00.123456789Z)", startAt)
		}
		cfg.StartAt = t
	}
	if callURLs != "" {
		cfg.CallURLs = map[string]string{}
		for _, kv := range strings.Split(callURLs, ",") {
			dep, u, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok || dep == "" || u == "" {
				return usageErr("run: --call-url: %q is not dep=URL", kv)
			}
			if _, dup := cfg.CallURLs[dep]; dup {
				return usageErr("run: --call-url: %s given twice", dep)
			}
			cfg.CallURLs[dep] = u
		}
	}
	return nil
}
