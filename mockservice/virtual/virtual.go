// Package virtual serves virtual copies of a user's own dependencies: each
// copy is one of the lab's stations (mockservice.Station: N workers, a
// bounded FIFO queue, refusals beyond, seeded service times) with the
// settings a capacity probe of the real dependency gave it
// (config.Virtual), optionally behind a token bucket, on an address of
// its own, answering one method on a few paths. Each has the lab's
// metrics, admin and health routes, for its one station under its name.
package virtual

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/time/rate"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Copy is one virtual copy: its station, its token bucket, its metrics and
// its routes (Handler). It is safe for concurrent use.
type Copy struct {
	cfg     config.Virtual // with its defaults
	scale   float64
	token   string
	seed    uint32 // the configured one, which a reset without a seed restores
	station *mockservice.Station
	paths   map[string]bool

	registry           *prometheus.Registry
	queueWait, service *prometheus.HistogramVec

	mu          sync.Mutex
	reseeded    uint32 // the seed since the last reset
	live        config.VirtualLive
	limiter     *rate.Limiter // nil: no token bucket
	rateLimited float64
}

// New builds copy i of cfg, validated, with its own Prometheus registry
// (the Go and process collectors included). Its station draws from
// api.CopySeed(cfg.Seed, name).
func New(cfg config.Copies, i int) (*Copy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("virtual: %w", err)
	}
	cfg = cfg.WithDefaults()
	if i < 0 || i >= len(cfg.Copies) {
		return nil, fmt.Errorf("virtual: copy %d of %d", i, len(cfg.Copies))
	}
	v := cfg.Copies[i]
	dist, err := v.Service.Build()
	if err != nil { // unreachable after Validate
		return nil, fmt.Errorf("virtual: %s.service: %w", v.Name, err)
	}
	st, err := mockservice.NewStation(v.Name, v.Station, dist, api.CopySeed(cfg.Seed, v.Name), cfg.TimeScale)
	if err != nil {
		return nil, err
	}
	if err := st.SetSlowdown(v.Slowdown); err != nil {
		return nil, fmt.Errorf("virtual: %w", err)
	}
	c := &Copy{cfg: v, scale: cfg.TimeScale, token: cfg.AdminToken, seed: cfg.Seed, station: st,
		paths: map[string]bool{}, reseeded: cfg.Seed, live: v.Live()}
	for _, p := range v.Paths {
		c.paths[p] = true
	}
	c.limiter = c.newLimiter()
	c.queueWait, c.service = mockservice.NewHistograms()
	c.observe()
	c.registry = prometheus.NewRegistry()
	c.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collector{c}, c.queueWait, c.service,
	)
	return c, nil
}

// newLimiter is a full token bucket of the live rate, in real time
// (PerSecond / the time scale; the burst as given), or nil without one.
// c.mu must be held, or c not yet shared.
func (c *Copy) newLimiter() *rate.Limiter {
	if c.live.Rate == nil {
		return nil
	}
	return rate.NewLimiter(c.realRate(c.live.Rate.PerSecond), c.live.Rate.Burst)
}

// realRate is perSecond lab tokens a second at the copy's time scale.
func (c *Copy) realRate(perSecond float64) rate.Limit { return rate.Limit(perSecond / c.scale) }

// observe hands the station its histograms' observers.
func (c *Copy) observe() {
	c.station.Observe(c.queueWait.WithLabelValues(c.cfg.Name), c.service.WithLabelValues(c.cfg.Name))
}

// Name is the copy's name, its station's.
func (c *Copy) Name() string { return c.cfg.Name }

// Config is the copy's settings as it was built (with its defaults).
func (c *Copy) Config() config.Virtual { return c.cfg }

// Station is the copy's station.
func (c *Copy) Station() *mockservice.Station { return c.station }

// Registry is the copy's metrics registry.
func (c *Copy) Registry() *prometheus.Registry { return c.registry }

// takeToken takes a token from the copy's bucket. Without one it reports
// the refusal's status and Retry-After, and counts it.
func (c *Copy) takeToken() (status int, retryAfter string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limiter == nil || c.limiter.Allow() {
		return 0, "", true
	}
	c.rateLimited++
	return c.live.Rate.Status, retryAfterSeconds(c.live.Rate.RetryAfter), false
}

// Stats is a snapshot of the copy: its one station under its name, with
// the token bucket's refusals (api.StationStats.RateLimited), the time
// scale and the seed since the last reset. It has no profile and no store.
func (c *Copy) Stats() api.Stats {
	st := c.station.Stats()
	c.mu.Lock()
	st.RateLimited = c.rateLimited
	seed := c.reseeded
	c.mu.Unlock()
	return api.Stats{TimeScale: c.scale, Seed: seed, Stations: map[string]api.StationStats{c.cfg.Name: st}}
}

// Reset zeroes the counters, high-water marks and histograms, fills the
// token bucket, and re-seeds the station with api.CopySeed(seed, name),
// so that the next run starts as the first did. The live settings are
// kept.
func (c *Copy) Reset(seed uint32) {
	c.mu.Lock()
	c.reseeded = seed
	c.rateLimited = 0
	c.limiter = c.newLimiter()
	c.mu.Unlock()
	c.station.Reset(api.CopySeed(seed, c.cfg.Name))
	c.queueWait.Reset()
	c.service.Reset()
	c.observe()
}
