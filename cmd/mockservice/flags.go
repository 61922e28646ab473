package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// binder defines one flag per configurable number. Each flag parses its
// value when given and adds an override, which config.Load applies over
// the defaults and the --config file.
type binder struct {
	fs        *flag.FlagSet
	def       config.Config // the defaults, shown in the usage
	overrides []config.Override
}

// bindService binds the settings of the service as a whole.
func (b *binder) bindService() {
	def := b.def
	b.str("listen", "address to listen on, host:port; a non-loopback host needs --admin-token",
		func(c *config.Config) *string { return &c.Listen })
	b.str("profile", "latency profile at start: healthy, slow-enrichment, slow-write",
		func(c *config.Config) *string { return &c.Profile })
	b.str("admin-token", "bearer token required on /admin/* routes",
		func(c *config.Config) *string { return &c.AdminToken })
	b.flag("seed", fmt.Sprintf("seed of the service-time generators; enrichment uses seed, records seed + 0x9e3779b9, a stream of its own (default %d)", def.Seed),
		func(v string) (config.Override, error) {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer in [0, 4294967295]", v)
			}
			return func(c *config.Config) error { c.Seed = uint32(n); return nil }, nil
		})
	b.float("time-scale", "multiplies every service time (0.1 runs ten times faster)",
		func(c *config.Config) *float64 { return &c.TimeScale })
	b.str("store", "the system of record's write-ahead file: every write answered 201 is appended and synced first, and\n"+
		"the file is replayed at start, so a restart or a crash keeps what was acknowledged (a torn last line is\n"+
		"ignored and reported); POST /admin/reset empties it. Empty: in memory, a restart forgets the writes",
		func(c *config.Config) *string { return &c.Store })
	b.intf("instances", fmt.Sprintf("independent mock services served behind the one port, in [1, %d]: with more than 1, instance k\n"+
		"answers under /i/k (/i/k/enrich, /i/k/admin/reset, /i/k/metrics, ...; OPTIONS /i/k/enrich identifies it), each with\n"+
		"its own stations, store (FILE.k), request log, seed, profile and metrics; GET /healthz at the root lists them.\n"+
		"For the shards of an experiment sharing one mock process (shard K: loadlab experiment --shard K/N --target http://HOST:PORT/i/K)", config.MaxInstances),
		func(c *config.Config) *int { return &c.Instances })
	b.intf("request-log-cap", "requests with an X-Request-Id kept in the request log (GET /admin/requests) since the last reset; 0 off",
		func(c *config.Config) *int { return &c.RequestLogCap })
	b.dur("shutdown-timeout", "on SIGTERM, how long requests in flight may take to finish",
		func(c *config.Config) *time.Duration { return &c.ShutdownTimeout })
	b.dur("read-header-timeout", "how long a connection may take to send a request's headers; a slower one (slowloris) is closed unanswered, before it reaches a station",
		func(c *config.Config) *time.Duration { return &c.ReadHeaderTimeout })
}

// bindStations binds each station's shape and behaviour.
func (b *binder) bindStations() {
	for _, st := range []struct {
		name string
		p    func(*config.Config) *config.Station
	}{
		{api.Enrichment, func(c *config.Config) *config.Station { return &c.Enrichment }},
		{api.Records, func(c *config.Config) *config.Station { return &c.Records }},
	} {
		b.intf(st.name+"-workers", st.name+": requests served at once",
			func(c *config.Config) *int { return &st.p(c).Workers })
		b.intf(st.name+"-queue", st.name+": requests that may wait for a worker; -1 unbounded",
			func(c *config.Config) *int { return &st.p(c).Queue })
		b.intf(st.name+"-reject-status", st.name+": HTTP status when the queue is full, 503 or 429",
			func(c *config.Config) *int { return &st.p(c).RejectStatus })
		b.dur(st.name+"-tie-window", st.name+": arrivals within this of a planned completion wait for it (the models' order for simultaneous events); 0 off",
			func(c *config.Config) *time.Duration { return &st.p(c).TieWindow })
		b.boolf(st.name+"-cancel-on-disconnect", st.name+": drop a request's work when its client leaves (default: do it anyway, counted as wasted)",
			func(c *config.Config) *bool { return &st.p(c).CancelOnDisconnect })
		b.boolf(st.name+"-precise-timers", st.name+": sleep the last 2 ms of each service in the kernel (tens of µs late) instead of on the runtime's timers (0.2–0.8 ms late)",
			func(c *config.Config) *bool { return &st.p(c).PreciseTimers })
	}
}

// bindProfiles binds the numbers of the built-in profiles' distributions.
// A flag whose profile was redefined with another kind is refused by
// validation of that kind's fields.
func (b *binder) bindProfiles() {
	median := func(s *latency.Spec) *time.Duration { return &s.Median }
	spread := func(s *latency.Spec) *float64 { return &s.Spread }
	value := func(s *latency.Spec) *time.Duration { return &s.Value }
	const h, se, sw = config.ProfileHealthy, config.ProfileSlowEnrichment, config.ProfileSlowWrite
	const en, rec = api.Enrichment, api.Records
	b.profDur("healthy-enrichment-median", "healthy: enrichment median (log-normal)", h, en, median)
	b.profFloat("healthy-enrichment-spread", "healthy: enrichment log-normal spread (sigma of ln)", h, en, spread)
	b.profDur("healthy-write-time", "healthy: time per write (fixed)", h, rec, value)
	b.profDur("slow-enrichment-median", "slow-enrichment: enrichment median (log-normal)", se, en, median)
	b.profFloat("slow-enrichment-spread", "slow-enrichment: enrichment log-normal spread", se, en, spread)
	b.profFloat("slow-enrichment-hang-probability", "slow-enrichment: share of enrichment calls that hang", se, en,
		func(s *latency.Spec) *float64 { return &s.HangProbability })
	b.profDur("slow-enrichment-hang-duration", "slow-enrichment: how long a hung call takes", se, en,
		func(s *latency.Spec) *time.Duration { return &s.HangDuration })
	b.profDur("slow-enrichment-write-time", "slow-enrichment: time per write (fixed)", se, rec, value)
	b.profDur("slow-write-enrichment-median", "slow-write: enrichment median (log-normal)", sw, en, median)
	b.profDur("slow-write-time", "slow-write: time per write (fixed)", sw, rec, value)
}

// flag defines a flag whose value parse turns into an override; an
// override that fails names the flag.
func (b *binder) flag(name, usage string, parse func(string) (config.Override, error)) {
	b.define(name, usage, false, parse)
}

func (b *binder) define(name, usage string, isBool bool, parse func(string) (config.Override, error)) {
	b.fs.Var(&rawValue{isBool: isBool, set: func(v string) error {
		o, err := parse(v)
		if err != nil {
			return err
		}
		b.overrides = append(b.overrides, func(c *config.Config) error {
			if err := o(c); err != nil {
				return fmt.Errorf("--%s: %v", name, err)
			}
			return nil
		})
		return nil
	}}, name, usage)
}

// set is an override that sets *p(c) to v.
func set[T any](p func(*config.Config) *T, v T) config.Override {
	return func(c *config.Config) error { *p(c) = v; return nil }
}

func (b *binder) str(name, usage string, p func(*config.Config) *string) {
	b.flag(name, usage+" (default "+strconv.Quote(*p(&b.def))+")", func(v string) (config.Override, error) {
		return set(p, v), nil
	})
}

func (b *binder) intf(name, usage string, p func(*config.Config) *int) {
	b.flag(name, fmt.Sprintf("%s (default %d)", usage, *p(&b.def)), func(v string) (config.Override, error) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return set(p, n), nil
	})
}

func (b *binder) dur(name, usage string, p func(*config.Config) *time.Duration) {
	b.flag(name, fmt.Sprintf("%s (default %v)", usage, *p(&b.def)), func(v string) (config.Override, error) {
		d, err := parseDuration(v)
		return set(p, d), err
	})
}

func (b *binder) float(name, usage string, p func(*config.Config) *float64) {
	b.flag(name, fmt.Sprintf("%s (default %g)", usage, *p(&b.def)), func(v string) (config.Override, error) {
		f, err := parseFloat(v)
		return set(p, f), err
	})
}

func (b *binder) boolf(name, usage string, p func(*config.Config) *bool) {
	b.define(name, usage, true, func(v string) (config.Override, error) {
		x, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return set(p, x), nil
	})
}

// profDur and profFloat bind one number of a station's distribution in a
// profile.
func (b *binder) profDur(name, usage, profile, station string, field func(*latency.Spec) *time.Duration) {
	b.flag(name, fmt.Sprintf("%s (default %v)", usage, *field(spec(&b.def, profile, station))), func(v string) (config.Override, error) {
		d, err := parseDuration(v)
		return func(c *config.Config) error {
			return updateProfile(c, profile, station, func(s *latency.Spec) { *field(s) = d })
		}, err
	})
}

func (b *binder) profFloat(name, usage, profile, station string, field func(*latency.Spec) *float64) {
	b.flag(name, fmt.Sprintf("%s (default %g)", usage, *field(spec(&b.def, profile, station))), func(v string) (config.Override, error) {
		f, err := parseFloat(v)
		return func(c *config.Config) error {
			return updateProfile(c, profile, station, func(s *latency.Spec) { *field(s) = f })
		}, err
	})
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like 150ms", v)
	}
	return d, nil
}

func parseFloat(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return f, nil
}

// spec is a copy of one station's spec of a profile in cfg.
func spec(cfg *config.Config, profile, station string) *latency.Spec {
	p := cfg.Profiles[profile]
	if station == api.Records {
		return &p.Records
	}
	return &p.Enrichment
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
// it was given.
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
