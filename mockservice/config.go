package mockservice

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/latency"
)

// Names of the two stations, used in routes' metrics (label service=...).
const (
	Enrichment = "enrichment"
	Records    = "records"
)

// Names of the built-in profiles.
const (
	ProfileHealthy        = "healthy"
	ProfileSlowEnrichment = "slow-enrichment"
	ProfileSlowWrite      = "slow-write"
)

// Defaults of Config, as in the lab write-up the service plays.
const (
	DefaultListen              = "127.0.0.1:8080"
	DefaultEnrichmentWorkers   = 256
	DefaultRecordsWorkers      = 6
	DefaultRecordsQueue        = 6
	DefaultEnrichmentMedian    = 120 * time.Millisecond
	DefaultEnrichmentSpread    = 0.3
	DefaultWriteTime           = 30 * time.Millisecond
	DefaultSlowEnrichMedian    = 1200 * time.Millisecond
	DefaultSlowEnrichHangP     = 0.05
	DefaultSlowEnrichHangFor   = 8 * time.Second
	DefaultSlowWriteTime       = 150 * time.Millisecond
	DefaultShutdownTimeout     = 30 * time.Second
	DefaultSeed                = 1
	DefaultTimeScale           = 1.0
	MaxBodyBytes               = 64 << 10
	defaultReadHeaderTimeout   = 5 * time.Second
	defaultReadTimeout         = 30 * time.Second
	defaultIdleTimeout         = 120 * time.Second
	maxTimeScale               = 1000.0
	minTimeScale               = 1e-4
	maxConfigBytes             = 1 << 20
	bearerPrefix               = "Bearer "
	adminTokenNonLoopbackError = "admin_token: required when listen address %q is not loopback (set --admin-token)"
)

// Profile gives each station's service-time distribution.
type Profile struct {
	Enrichment latency.Spec `yaml:"enrichment" json:"enrichment"`
	Records    latency.Spec `yaml:"records" json:"records"`
}

// Config is everything the mock service needs. The zero value is not valid:
// start from DefaultConfig.
type Config struct {
	Listen          string             `yaml:"listen" json:"listen"`
	Profile         string             `yaml:"profile" json:"profile"`
	AdminToken      string             `yaml:"admin_token" json:"-"`
	Seed            uint32             `yaml:"seed" json:"seed"`
	TimeScale       float64            `yaml:"time_scale" json:"time_scale"`
	ShutdownTimeout time.Duration      `yaml:"shutdown_timeout" json:"shutdown_timeout"`
	Enrichment      StationConfig      `yaml:"enrichment" json:"enrichment"`
	Records         StationConfig      `yaml:"records" json:"records"`
	Profiles        map[string]Profile `yaml:"profiles" json:"profiles"`
	// RequestLogCap bounds the per-request log (requests that carry an
	// X-Request-Id header) kept since the last reset; 0 turns it off.
	RequestLogCap int `yaml:"request_log_cap" json:"request_log_cap"`
}

// DefaultConfig returns the lab's service: enrichment with 256 workers and an
// unbounded queue; records with 6 workers, 6 queue slots and 503 beyond; the
// profiles healthy, slow-enrichment and slow-write.
func DefaultConfig() Config {
	healthyEnrich := latency.Spec{Kind: "lognormal", Median: DefaultEnrichmentMedian, Spread: DefaultEnrichmentSpread}
	slowEnrich := latency.Spec{Kind: "lognormal", Median: DefaultSlowEnrichMedian, Spread: DefaultEnrichmentSpread,
		HangProbability: DefaultSlowEnrichHangP, HangDuration: DefaultSlowEnrichHangFor}
	write := latency.Spec{Kind: "fixed", Value: DefaultWriteTime}
	slowWrite := latency.Spec{Kind: "fixed", Value: DefaultSlowWriteTime}
	return Config{
		Listen:          DefaultListen,
		Profile:         ProfileHealthy,
		RequestLogCap:   DefaultRequestLogCap,
		Seed:            DefaultSeed,
		TimeScale:       DefaultTimeScale,
		ShutdownTimeout: DefaultShutdownTimeout,
		Enrichment:      StationConfig{Workers: DefaultEnrichmentWorkers, Queue: UnboundedQueue, RejectStatus: DefaultRejectStatus},
		Records:         StationConfig{Workers: DefaultRecordsWorkers, Queue: DefaultRecordsQueue, RejectStatus: DefaultRejectStatus},
		Profiles: map[string]Profile{
			ProfileHealthy:        {Enrichment: healthyEnrich, Records: write},
			ProfileSlowEnrichment: {Enrichment: slowEnrich, Records: write},
			ProfileSlowWrite:      {Enrichment: healthyEnrich, Records: slowWrite},
		},
	}
}

// LoadConfigFile reads YAML from path over c: keys present in the file
// replace c's values (a profile named in the file replaces that profile
// whole); unknown keys are errors.
func LoadConfigFile(path string, c *Config) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return fmt.Errorf("config %s: larger than %d bytes", path, maxConfigBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
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

// Validate reports the first invalid field by its YAML path.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not host:port: %v", c.Listen, err)
	}
	if c.AdminToken == "" && !isLoopback(c.Listen) {
		return fmt.Errorf(adminTokenNonLoopbackError, c.Listen)
	}
	if !(c.TimeScale >= minTimeScale && c.TimeScale <= maxTimeScale) {
		return fmt.Errorf("time_scale: %v is not in [%g, %g]", c.TimeScale, minTimeScale, maxTimeScale)
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("shutdown_timeout: %v must be > 0", c.ShutdownTimeout)
	}
	if c.RequestLogCap < 0 {
		return fmt.Errorf("request_log_cap: %d must be ≥ 0", c.RequestLogCap)
	}
	if err := c.Enrichment.Validate(); err != nil {
		return fmt.Errorf("enrichment.%w", err)
	}
	if err := c.Records.Validate(); err != nil {
		return fmt.Errorf("records.%w", err)
	}
	if len(c.Profiles) == 0 {
		return errors.New("profiles: at least one is needed")
	}
	for _, name := range c.ProfileNames() {
		if name == "" || strings.ContainsAny(name, " \t\n\"") {
			return fmt.Errorf("profiles: name %q must be non-empty, without spaces or quotes", name)
		}
		if _, err := c.Profiles[name].build(); err != nil {
			return fmt.Errorf("profiles.%s.%w", name, err)
		}
	}
	if _, ok := c.Profiles[c.Profile]; !ok {
		return fmt.Errorf("profile: %q is not one of %s", c.Profile, strings.Join(c.ProfileNames(), ", "))
	}
	return nil
}

type builtProfile struct{ enrichment, records latency.Distribution }

func (p Profile) build() (builtProfile, error) {
	e, err := p.Enrichment.Build()
	if err != nil {
		return builtProfile{}, fmt.Errorf("enrichment.%w", err)
	}
	r, err := p.Records.Build()
	if err != nil {
		return builtProfile{}, fmt.Errorf("records.%w", err)
	}
	return builtProfile{enrichment: e, records: r}, nil
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

// YAML returns c as a YAML document that LoadConfigFile reads back; the
// admin token is left out.
func (c Config) YAML() ([]byte, error) {
	c.AdminToken = ""
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return out, nil
}
