// Command mockservice serves the lab's two mock dependencies, the enrichment
// API (POST /enrich) and the system of record (POST /records), from one
// process and one port. Run with --help for every setting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/latency"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, printOnly, err := parseConfig(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mockservice: %v (see --help)\n", err)
		return 2
	}
	if printOnly {
		out, err := cfg.YAML()
		if err != nil {
			fmt.Fprintf(stderr, "mockservice: %v\n", err)
			return 1
		}
		stdout.Write(out)
		return 0
	}
	in, err := mockservice.NewInstances(cfg, max(cfg.Instances, 1))
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "mockservice: listen: %v\n", err)
		return 1
	}
	logger := log.New(stderr, "mockservice: ", log.LstdFlags)
	fmt.Fprintf(stdout, "mockservice listening on http://%s (version %s, profile %s, time scale %g, seed %d)\n",
		ln.Addr(), mockservice.Version(), cfg.Profile, cfg.TimeScale, cfg.Seed)
	paths := in.Paths()
	if len(paths) > 1 {
		fmt.Fprintf(stdout, "%d independent instances, under http://%s%s … http://%s%s (GET /healthz at the root lists them)\n",
			len(paths), ln.Addr(), paths[0], ln.Addr(), paths[len(paths)-1])
	}
	for k, svc := range in.Services {
		prefix := ""
		if len(paths) > 1 {
			prefix = paths[k] + " "
		}
		if r := svc.Replayed; r.Path == "" {
			fmt.Fprintf(stdout, "%sstore: in memory (--store FILE keeps acknowledged writes across restarts)\n", prefix)
		} else {
			torn := ""
			if r.TornEnd {
				torn = "; a torn last line (an append cut short, never acknowledged) was ignored"
			}
			fmt.Fprintf(stdout, "%sstore: %s, %d accepted writes replayed%s\n", prefix, r.Path, r.Writes, torn)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = in.Serve(ctx, ln)
	switch {
	case err == nil:
		logger.Printf("stopped cleanly")
		return 0
	case errors.Is(err, mockservice.ErrForcedShutdown):
		logger.Printf("%v (after %v)", err, cfg.ShutdownTimeout)
		return 1
	default:
		logger.Printf("%v", err)
		return 1
	}
}

// parseConfig builds the configuration: defaults, then the --config file,
// then any flag given on the command line (flags win over the file).
func parseConfig(args []string, helpOut io.Writer) (cfg config.Config, printOnly bool, err error) {
	cfg = config.Default()
	fs := flag.NewFlagSet("mockservice", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	var configPath string
	fs.StringVar(&configPath, "config", "", "YAML file of settings (keys as printed by --print-config); flags given on the command line override it")
	printConfig := fs.Bool("print-config", false, "print the effective configuration as YAML (a starting point for --config) and exit")
	bindFlags(fs, &cfg)
	fs.Usage = func() {} // help is printed below, only when asked for
	usage := func() {
		fs.SetOutput(helpOut)
		defer fs.SetOutput(io.Discard)
		fmt.Fprintf(helpOut, `Usage: mockservice [flags]

Serves the lab's two mock dependencies on one port:
  POST /enrich   {"record_id": "...", "step": 1}   enrichment API (many workers)
  POST /records  {"id": "...", "complete": true}   system of record (6 workers, 6 queue slots, 503 beyond)
  OPTIONS /enrich, OPTIONS /records   204 with X-Loadlab-Mock (name/version) and
                 X-Loadlab-Time-Scale: identifies the mock; never reaches a station
  GET  /healthz  {"status":"ok","service":"loadlab-mock","version":...,"time_scale":...}
  GET  /metrics  Prometheus text format
  GET|PUT /admin/profile, POST /admin/reset, GET /admin/stats  (Bearer token when --admin-token is set)
Profiles: healthy, slow-enrichment, slow-write (and any defined in --config).
A config field's flag is its YAML path with dots and underscores as dashes.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
		}
		return cfg, false, err
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if configPath != "" {
		// Re-apply the command-line flags over the file.
		var set []*flag.Flag
		fs.Visit(func(f *flag.Flag) { set = append(set, f) })
		given := map[string]string{}
		for _, f := range set {
			given[f.Name] = f.Value.String()
		}
		cfg = config.Default()
		if err := config.LoadFile(configPath, &cfg); err != nil {
			return cfg, false, err
		}
		for _, f := range set {
			if err := f.Value.Set(given[f.Name]); err != nil {
				return cfg, false, fmt.Errorf("--%s: %v", f.Name, err)
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, false, fmt.Errorf("config: %w", err)
	}
	return cfg, *printConfig, nil
}

// bindFlags defines one flag per configurable number. Each flag writes
// through a function of *cfg, so it can be re-applied after a config file
// has replaced cfg's contents.
func bindFlags(fs *flag.FlagSet, cfg *config.Config) {
	def := config.Default()
	str := func(name, usage string, get func() string, set func(string)) {
		funcFlag(fs, name, usage+" (default "+strconv.Quote(get())+")", func(v string) error { set(v); return nil })
	}
	intf := func(name, usage string, p func(*config.Config) *int) {
		funcFlag(fs, name, fmt.Sprintf("%s (default %d)", usage, *p(&def)), func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not an integer", v)
			}
			*p(cfg) = n
			return nil
		})
	}
	dur := func(name, usage string, p func(*config.Config) *time.Duration) {
		funcFlag(fs, name, fmt.Sprintf("%s (default %v)", usage, *p(&def)), func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%q is not a duration like 150ms", v)
			}
			*p(cfg) = d
			return nil
		})
	}
	float := func(name, usage string, p func(*config.Config) *float64) {
		funcFlag(fs, name, fmt.Sprintf("%s (default %g)", usage, *p(&def)), func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			*p(cfg) = f
			return nil
		})
	}
	boolf := func(name, usage string, p func(*config.Config) *bool) {
		boolFuncFlag(fs, name, usage, func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*p(cfg) = b
			return nil
		})
	}

	str("listen", "address to listen on, host:port; a non-loopback host needs --admin-token",
		func() string { return def.Listen }, func(v string) { cfg.Listen = v })
	str("profile", "latency profile at start: healthy, slow-enrichment, slow-write",
		func() string { return def.Profile }, func(v string) { cfg.Profile = v })
	str("admin-token", "bearer token required on /admin/* routes",
		func() string { return "" }, func(v string) { cfg.AdminToken = v })
	funcFlag(fs, "seed", fmt.Sprintf("seed of the service-time generators; enrichment uses seed, records seed + 0x9e3779b9, a stream of its own (default %d)", def.Seed),
		func(v string) error {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return fmt.Errorf("%q is not an integer in [0, 4294967295]", v)
			}
			cfg.Seed = uint32(n)
			return nil
		})
	float("time-scale", "multiplies every service time (0.1 runs ten times faster)",
		func(c *config.Config) *float64 { return &c.TimeScale })
	str("store", "the system of record's write-ahead file: every write answered 201 is appended and synced first, and\n"+
		"the file is replayed at start, so a restart or a crash keeps what was acknowledged (a torn last line is\n"+
		"ignored and reported); POST /admin/reset empties it. Empty: in memory, a restart forgets the writes",
		func() string { return cfg.Store }, func(v string) { cfg.Store = v })
	intf("instances", fmt.Sprintf("independent mock services served behind the one port, in [1, %d]: with more than 1, instance k\n"+
		"answers under /i/k (/i/k/enrich, /i/k/admin/reset, /i/k/metrics, ...; OPTIONS /i/k/enrich identifies it), each with\n"+
		"its own stations, store (FILE.k), request log, seed, profile and metrics; GET /healthz at the root lists them.\n"+
		"For the shards of an experiment sharing one mock process (shard K: loadlab experiment --shard K/N --target http://HOST:PORT/i/K)", config.MaxInstances),
		func(c *config.Config) *int { return &c.Instances })
	intf("request-log-cap", "requests with an X-Request-Id kept in the request log (GET /admin/requests) since the last reset; 0 off",
		func(c *config.Config) *int { return &c.RequestLogCap })
	dur("shutdown-timeout", "on SIGTERM, how long requests in flight may take to finish",
		func(c *config.Config) *time.Duration { return &c.ShutdownTimeout })
	dur("read-header-timeout", "how long a connection may take to send a request's headers; a slower one (slowloris) is closed unanswered, before it reaches a station",
		func(c *config.Config) *time.Duration { return &c.ReadHeaderTimeout })

	for _, st := range []struct {
		name string
		p    func(*config.Config) *config.Station
	}{
		{api.Enrichment, func(c *config.Config) *config.Station { return &c.Enrichment }},
		{api.Records, func(c *config.Config) *config.Station { return &c.Records }},
	} {
		intf(st.name+"-workers", st.name+": requests served at once",
			func(c *config.Config) *int { return &st.p(c).Workers })
		intf(st.name+"-queue", st.name+": requests that may wait for a worker; -1 unbounded",
			func(c *config.Config) *int { return &st.p(c).Queue })
		intf(st.name+"-reject-status", st.name+": HTTP status when the queue is full, 503 or 429",
			func(c *config.Config) *int { return &st.p(c).RejectStatus })
		dur(st.name+"-tie-window", st.name+": arrivals within this of a planned completion wait for it (the models' order for simultaneous events); 0 off",
			func(c *config.Config) *time.Duration { return &st.p(c).TieWindow })
		boolf(st.name+"-cancel-on-disconnect", st.name+": drop a request's work when its client leaves (default: do it anyway, counted as wasted)",
			func(c *config.Config) *bool { return &st.p(c).CancelOnDisconnect })
		boolf(st.name+"-precise-timers", st.name+": sleep the last 2 ms of each service in the kernel (tens of µs late) instead of on the runtime's timers (0.2–0.8 ms late)",
			func(c *config.Config) *bool { return &st.p(c).PreciseTimers })
	}

	// Profile numbers. They address the built-in profiles' distributions;
	// a flag whose profile was redefined with another kind is refused by
	// validation of that kind's fields.
	spec := func(profile, station string) func(*config.Config) *latency.Spec {
		return func(c *config.Config) *latency.Spec {
			p := c.Profiles[profile]
			// Maps hold values; write back through a pointer to a copy.
			sp := &p.Enrichment
			if station == api.Records {
				sp = &p.Records
			}
			return sp
		}
	}
	profDur := func(name, usage, profile, station string, field func(*latency.Spec) *time.Duration) {
		get := spec(profile, station)
		funcFlag(fs, name, fmt.Sprintf("%s (default %v)", usage, *field(get(&def))), func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%q is not a duration like 150ms", v)
			}
			return updateProfile(cfg, profile, station, func(s *latency.Spec) { *field(s) = d })
		})
	}
	profFloat := func(name, usage, profile, station string, field func(*latency.Spec) *float64) {
		get := spec(profile, station)
		funcFlag(fs, name, fmt.Sprintf("%s (default %g)", usage, *field(get(&def))), func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			return updateProfile(cfg, profile, station, func(s *latency.Spec) { *field(s) = f })
		})
	}
	median := func(s *latency.Spec) *time.Duration { return &s.Median }
	spread := func(s *latency.Spec) *float64 { return &s.Spread }
	value := func(s *latency.Spec) *time.Duration { return &s.Value }
	const h, se, sw = config.ProfileHealthy, config.ProfileSlowEnrichment, config.ProfileSlowWrite
	const en, rec = api.Enrichment, api.Records
	profDur("healthy-enrichment-median", "healthy: enrichment median (log-normal)", h, en, median)
	profFloat("healthy-enrichment-spread", "healthy: enrichment log-normal spread (sigma of ln)", h, en, spread)
	profDur("healthy-write-time", "healthy: time per write (fixed)", h, rec, value)
	profDur("slow-enrichment-median", "slow-enrichment: enrichment median (log-normal)", se, en, median)
	profFloat("slow-enrichment-spread", "slow-enrichment: enrichment log-normal spread", se, en, spread)
	profFloat("slow-enrichment-hang-probability", "slow-enrichment: share of enrichment calls that hang", se, en,
		func(s *latency.Spec) *float64 { return &s.HangProbability })
	profDur("slow-enrichment-hang-duration", "slow-enrichment: how long a hung call takes", se, en,
		func(s *latency.Spec) *time.Duration { return &s.HangDuration })
	profDur("slow-enrichment-write-time", "slow-enrichment: time per write (fixed)", se, rec, value)
	profDur("slow-write-enrichment-median", "slow-write: enrichment median (log-normal)", sw, en, median)
	profDur("slow-write-time", "slow-write: time per write (fixed)", sw, rec, value)
}

// updateProfile changes one station's spec of a profile in cfg.
func updateProfile(cfg *config.Config, profile, station string, change func(*latency.Spec)) error {
	p, ok := cfg.Profiles[profile]
	if !ok {
		return fmt.Errorf("profile %q is not defined", profile)
	}
	if station == api.Records {
		change(&p.Records)
	} else {
		change(&p.Enrichment)
	}
	cfg.Profiles[profile] = p
	return nil
}

// rawValue is a flag.Value that applies a function and remembers the text
// it was given, so a flag can be applied again over a config file.
type rawValue struct {
	raw    string
	set    func(string) error
	isBool bool
}

func (v *rawValue) String() string { return v.raw }
func (v *rawValue) Set(s string) error {
	v.raw = s
	return v.set(s)
}
func (v *rawValue) IsBoolFlag() bool { return v.isBool }

func funcFlag(fs *flag.FlagSet, name, usage string, set func(string) error) {
	fs.Var(&rawValue{set: set}, name, usage)
}

func boolFuncFlag(fs *flag.FlagSet, name, usage string, set func(string) error) {
	fs.Var(&rawValue{set: set, isBool: true}, name, usage)
}
