// Package config is the mock service's configuration: the shape of each
// station, the latency profiles, and the service's settings, with their
// defaults (the lab's), their loading (a file, then a command line's
// overrides) and their validation. The server builds itself from
// a Config; the experiment runner reads one to compute its bounds.
package config

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Names of the built-in profiles.
const (
	ProfileHealthy        = "healthy"
	ProfileSlowEnrichment = "slow-enrichment"
	ProfileSlowWrite      = "slow-write"
)

// Defaults of Config, as in the lab write-up the service plays.
const (
	DefaultListen            = api.DefaultAddress
	DefaultEnrichmentWorkers = 256
	DefaultRecordsWorkers    = 6
	DefaultRecordsQueue      = 6
	DefaultEnrichmentMedian  = 120 * time.Millisecond
	DefaultEnrichmentSpread  = 0.3
	DefaultWriteTime         = 30 * time.Millisecond
	DefaultSlowEnrichMedian  = 1200 * time.Millisecond
	DefaultSlowEnrichHangP   = 0.05
	DefaultSlowEnrichHangFor = 8 * time.Second
	DefaultSlowWriteTime     = 150 * time.Millisecond
	DefaultShutdownTimeout   = 30 * time.Second
	// DefaultReadHeaderTimeout closes a connection that has not sent a
	// request's headers within it (a slowloris client).
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultSeed              = 1
	DefaultTimeScale         = 1.0
	// DefaultRequestLogCap bounds the per-request log; more requests are
	// counted as dropped.
	DefaultRequestLogCap = 100_000
	DefaultRejectStatus  = http.StatusServiceUnavailable
	// UnboundedQueue as a Station's Queue means no limit.
	UnboundedQueue = -1

	maxConfigBytes = 1 << 20
)

// fieldErrorf returns a *field.Error for a setting, named by its YAML
// path ("admin_token", "records.workers"), its message formatted as
// fmt.Errorf does.
func fieldErrorf(name, format string, a ...any) error { return field.Errorf(name, format, a...) }

// within puts a station's *field.Error under the station's name.
func within(station string, err error) error {
	if _, ok := field.Of(err); ok {
		return field.Within(station, err)
	}
	return fmt.Errorf("%s.%w", station, err)
}

// Station is the shape of one station: N workers in front of a FIFO queue
// of at most Queue waiting requests.
type Station struct {
	// Workers is how many requests are served at once (≥ 1).
	Workers int `yaml:"workers" json:"workers"`
	// Queue is how many requests may wait for a worker; UnboundedQueue (-1)
	// means no limit, 0 means a request that finds every worker busy is
	// refused.
	Queue int `yaml:"queue" json:"queue"`
	// RejectStatus is the HTTP status of a refusal: 503 or 429.
	RejectStatus int `yaml:"reject_status" json:"reject_status"`
	// CancelOnDisconnect drops a request's work when its client goes away.
	// Off by default: like the systems the source documents model, the
	// server does not know the client gave up and does the work anyway.
	CancelOnDisconnect bool `yaml:"cancel_on_disconnect" json:"cancel_on_disconnect"`
	// TieWindow makes events closer than this count as simultaneous, in the
	// models' order: a request arriving to a full station while a service is
	// planned to complete within the window waits for that completion
	// first. 0 (the default) turns it off. loadlab load sets it to a tenth
	// of a model second so that a real run can follow the model's
	// one-second steps.
	TieWindow time.Duration `yaml:"tie_window,omitempty" json:"tie_window,omitempty"`
	// PreciseTimers ends each service by sleeping its last 2 ms in the
	// kernel (clock_nanosleep on the goroutine's thread), which is late by
	// tens of microseconds, where the runtime's timers, which its
	// netpoller wakes at millisecond granularity, are late by 0.2–0.8 ms:
	// that lateness is added to every call a client measures. The cost is
	// a thread per service in its last 2 ms, and a client leaving (with
	// CancelOnDisconnect) noticed at the end of them. Off by default (the
	// replay endpoint turns them on).
	PreciseTimers bool `yaml:"precise_timers" json:"precise_timers"`
}

// Validate reports the first invalid field as a *field.Error, named
// relative to the station ("workers").
func (c Station) Validate() error {
	switch {
	case c.Workers < 1:
		return fieldErrorf("workers", "%d must be ≥ 1", c.Workers)
	case c.Queue < UnboundedQueue:
		return fieldErrorf("queue", "%d must be ≥ 0, or -1 for unbounded", c.Queue)
	case !api.Rejected(c.RejectStatus):
		return fieldErrorf("reject_status", "%d must be 503 or 429", c.RejectStatus)
	case c.TieWindow < 0:
		return fieldErrorf("tie_window", "%v must be ≥ 0", c.TieWindow)
	}
	return nil
}

// Profile gives each station's service-time distribution.
type Profile struct {
	Enrichment latency.Spec `yaml:"enrichment" json:"enrichment"`
	Records    latency.Spec `yaml:"records" json:"records"`
}

// Build returns the profile's two distributions, or an error naming the
// bad field.
func (p Profile) Build() (enrichment, records latency.Distribution, err error) {
	if enrichment, err = p.Enrichment.Build(); err != nil {
		return nil, nil, fmt.Errorf("enrichment.%w", err)
	}
	if records, err = p.Records.Build(); err != nil {
		return nil, nil, fmt.Errorf("records.%w", err)
	}
	return enrichment, records, nil
}

// Config is everything the mock service needs. The zero value is not valid:
// start from Default.
type Config struct {
	Listen          string        `yaml:"listen" json:"listen"`
	Profile         string        `yaml:"profile" json:"profile"`
	AdminToken      string        `yaml:"admin_token" json:"-"`
	Seed            uint32        `yaml:"seed" json:"seed"`
	TimeScale       float64       `yaml:"time_scale" json:"time_scale"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" json:"shutdown_timeout"`
	// ReadHeaderTimeout is how long a connection may take to send a
	// request's headers; a slower one is closed without an answer, before
	// its request reaches a station. (The server's read timeout, which
	// bounds reading the whole request, body included, applies too.)
	ReadHeaderTimeout time.Duration      `yaml:"read_header_timeout" json:"read_header_timeout"`
	Enrichment        Station            `yaml:"enrichment" json:"enrichment"`
	Records           Station            `yaml:"records" json:"records"`
	Profiles          map[string]Profile `yaml:"profiles" json:"profiles"`
	// RequestLogCap bounds the per-request log (requests that carry an
	// X-Request-Id header) kept since the last reset; 0 turns it off.
	RequestLogCap int `yaml:"request_log_cap" json:"request_log_cap"`
	// Replay accepts api.HeaderReplay on POST /enrich: the request is
	// served for exactly that many milliseconds (lab time) instead of a
	// draw. Off, the header is refused (400): only a replay client sets it.
	Replay bool `yaml:"replay" json:"replay"`
	// Store, when set, is the system of record's write-ahead file: an
	// accepted write is appended and synced before its 201, and the file
	// is replayed at start, so a restart (even a crash) keeps every
	// acknowledged write. Empty: the store is in memory and a restart
	// forgets it.
	Store string `yaml:"store,omitempty" json:"store,omitempty"`
	// Instances is how many independent services the process serves
	// behind its one port (1: one, at the root; more: instance k
	// under /i/k, for the shards of an experiment that share one mock
	// process), at most MaxInstances.
	Instances int `yaml:"instances,omitempty" json:"instances,omitempty"`
}

// MaxInstances bounds Config.Instances.
const MaxInstances = 64

// Default returns the lab's service: enrichment with 256 workers and an
// unbounded queue; records with 6 workers, 6 queue slots and 503 beyond; the
// profiles healthy, slow-enrichment and slow-write.
func Default() Config {
	healthyEnrich := latency.Spec{Kind: latency.KindLogNormal, Median: DefaultEnrichmentMedian, Spread: DefaultEnrichmentSpread}
	slowEnrich := latency.Spec{Kind: latency.KindLogNormal, Median: DefaultSlowEnrichMedian, Spread: DefaultEnrichmentSpread,
		HangProbability: DefaultSlowEnrichHangP, HangDuration: DefaultSlowEnrichHangFor}
	write := latency.Spec{Kind: latency.KindFixed, Value: DefaultWriteTime}
	slowWrite := latency.Spec{Kind: latency.KindFixed, Value: DefaultSlowWriteTime}
	return Config{
		Listen:            DefaultListen,
		Profile:           ProfileHealthy,
		RequestLogCap:     DefaultRequestLogCap,
		Seed:              DefaultSeed,
		TimeScale:         DefaultTimeScale,
		ShutdownTimeout:   DefaultShutdownTimeout,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		Instances:         1,
		Enrichment:        Station{Workers: DefaultEnrichmentWorkers, Queue: UnboundedQueue, RejectStatus: DefaultRejectStatus},
		Records:           Station{Workers: DefaultRecordsWorkers, Queue: DefaultRecordsQueue, RejectStatus: DefaultRejectStatus},
		Profiles: map[string]Profile{
			ProfileHealthy:        {Enrichment: healthyEnrich, Records: write},
			ProfileSlowEnrichment: {Enrichment: slowEnrich, Records: write},
			ProfileSlowWrite:      {Enrichment: healthyEnrich, Records: slowWrite},
		},
	}
}

// Endpoint returns a service whose enrichment station (POST /enrich) is one
// endpoint of the given shape, with a fixed service time, at the given
// time scale, on a loopback port of the system's choosing: the admission
// model's endpoint. Its only profile is "endpoint".
func Endpoint(st Station, service time.Duration, scale float64) Config {
	cfg := Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.TimeScale = scale
	cfg.Enrichment = st
	const profile = "endpoint"
	cfg.Profiles = map[string]Profile{profile: {
		Enrichment: latency.Spec{Kind: latency.KindFixed, Value: service},
		Records:    cfg.Profiles[ProfileHealthy].Records,
	}}
	cfg.Profile = profile
	return cfg
}

// Station returns the shape of the station called name (api.Enrichment or
// api.Records).
func (c Config) Station(name string) (Station, bool) {
	switch name {
	case api.Enrichment:
		return c.Enrichment, true
	case api.Records:
		return c.Records, true
	}
	return Station{}, false
}

// ProfileNames returns the configured profile names, sorted.
func (c Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Validate reports the first invalid field by its YAML path: a
// *field.Error for a setting of the Config or of a station
// ("records.workers"), a text naming the path for a profile's
// distribution ("profiles.slow-write.records.value: …").
func (c Config) Validate() error {
	if err := c.validateService(); err != nil {
		return err
	}
	if err := c.Enrichment.Validate(); err != nil {
		return within("enrichment", err)
	}
	if err := c.Records.Validate(); err != nil {
		return within("records", err)
	}
	if len(c.Profiles) == 0 {
		return fieldErrorf("profiles", "at least one is needed")
	}
	for _, name := range c.ProfileNames() {
		if name == "" || strings.ContainsAny(name, " \t\n\"") {
			return fieldErrorf("profiles", "name %q must be non-empty, without spaces or quotes", name)
		}
		if _, _, err := c.Profiles[name].Build(); err != nil {
			return fmt.Errorf("profiles.%s.%w", name, err)
		}
	}
	if _, ok := c.Profiles[c.Profile]; !ok {
		return fieldErrorf("profile", "%q is not one of %s", c.Profile, strings.Join(c.ProfileNames(), ", "))
	}
	return nil
}

// validateService checks the settings of the service as a whole.
func (c Config) validateService() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fieldErrorf("listen", "%q is not host:port: %v", c.Listen, err)
	}
	if c.AdminToken == "" && !isLoopback(c.Listen) {
		return fieldErrorf("admin_token", "required when listen address %q is not loopback", c.Listen)
	}
	if c.Instances < 1 || c.Instances > MaxInstances {
		return fieldErrorf("instances", "%d must be in [1, %d]", c.Instances, MaxInstances)
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return &field.Error{Field: "time_scale", Err: err}
	}
	if c.ShutdownTimeout <= 0 {
		return fieldErrorf("shutdown_timeout", "%v must be > 0", c.ShutdownTimeout)
	}
	if c.ReadHeaderTimeout <= 0 {
		return fieldErrorf("read_header_timeout", "%v must be > 0", c.ReadHeaderTimeout)
	}
	if c.RequestLogCap < 0 {
		return fieldErrorf("request_log_cap", "%d must be ≥ 0", c.RequestLogCap)
	}
	return nil
}

// isLoopback reports whether a listen address binds only loopback.
// An empty host ("":8080) binds every interface and is not loopback.
func isLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
