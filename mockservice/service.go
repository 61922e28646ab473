// Package mockservice plays the two dependencies of the lab over real HTTP:
// an enrichment API that tolerates many concurrent calls and a system of
// record with a few workers, a short queue and 503 beyond it. Each is a
// Station: N workers in front of a bounded FIFO queue, with seeded service
// times from a switchable latency profile. Work is not cancelled when a
// client gives up (unless configured); such work is counted as wasted.
//
// This package is the server. Its wire contract (routes, bodies, outcome
// names, the admin JSON and a client for it) is package api, its settings
// package config; clients import those, never this.
package mockservice

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Service is the mock dependencies service: both stations, the store of
// writes, the admin routes and the metrics. It is safe for concurrent use.
type Service struct {
	cfg        config.Config
	profiles   map[string]profile
	enrichment *Station
	records    *Station
	registry   *prometheus.Registry
	queueWait  *prometheus.HistogramVec
	service    *prometheus.HistogramVec

	log *RequestLog

	// writes is the system of record's store: durable with cfg.Store.
	writes *writeStore
	// Replayed is what opening the store found (nothing in memory).
	Replayed StoreReplay

	mu      sync.Mutex
	profile string
	// live is each station's current service-time spec: the profile's,
	// or what PATCH /admin/config made it.
	live map[string]latency.Spec
	seed uint32 // the enrichment station's; the records station's is api.RecordsSeed(seed)

	seq sequencer // replay mode: the issue order of api.HeaderReplaySeq
}

// sequencer lets numbered requests in, in order: await(n) returns once
// done has been called for every number below n (or after a wait limit).
type sequencer struct {
	mu    sync.Mutex
	next  int
	epoch int // advanced by reset: a done from before it counts for nothing
	wait  map[int]chan struct{}
}

// await returns the epoch in which n was let in.
func (q *sequencer) await(ctx context.Context, n int, limit time.Duration) int {
	q.mu.Lock()
	epoch := q.epoch
	if n <= q.next {
		q.mu.Unlock()
		return epoch
	}
	if q.wait == nil {
		q.wait = map[int]chan struct{}{}
	}
	ch := make(chan struct{})
	q.wait[n] = ch
	q.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
	q.mu.Lock()
	if q.wait[n] == ch {
		delete(q.wait, n)
	}
	epoch = q.epoch
	q.mu.Unlock()
	return epoch
}

// done lets in every waiter numbered up to n+1 (one that timed out ahead
// of its turn may have moved next past others).
func (q *sequencer) done(epoch, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if epoch != q.epoch {
		return
	}
	q.next = max(q.next, n+1)
	for m, ch := range q.wait {
		if m <= q.next {
			close(ch)
			delete(q.wait, m)
		}
	}
}

func (q *sequencer) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.next = 0
	q.epoch++
	for n, ch := range q.wait {
		close(ch)
		delete(q.wait, n)
	}
}

// profile is a config.Profile with its distributions built.
type profile struct{ enrichment, records latency.Distribution }

// New validates cfg and builds the service with its own Prometheus registry
// (Go and process collectors included).
func New(cfg config.Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mockservice: %w", err)
	}
	s := &Service{cfg: cfg, profiles: map[string]profile{}, profile: cfg.Profile, seed: cfg.Seed,
		live: map[string]latency.Spec{api.Enrichment: cfg.Profiles[cfg.Profile].Enrichment, api.Records: cfg.Profiles[cfg.Profile].Records}}
	for name, p := range cfg.Profiles {
		e, r, err := p.Build()
		if err != nil { // unreachable after Validate, kept for safety
			return nil, fmt.Errorf("mockservice: profiles.%s.%w", name, err)
		}
		s.profiles[name] = profile{enrichment: e, records: r}
	}
	cur := s.profiles[cfg.Profile]
	var err error
	// Distinct seeds so the two stations do not draw the same sequence.
	if s.enrichment, err = NewStation(api.Enrichment, cfg.Enrichment, cur.enrichment, cfg.Seed, cfg.TimeScale); err != nil {
		return nil, err
	}
	if s.records, err = NewStation(api.Records, cfg.Records, cur.records, api.RecordsSeed(cfg.Seed), cfg.TimeScale); err != nil {
		return nil, err
	}
	s.queueWait, s.service = NewHistograms()
	if cfg.RequestLogCap > 0 {
		s.log = NewRequestLog(cfg.RequestLogCap)
		s.enrichment.SetRequestLog(s.log)
		s.records.SetRequestLog(s.log)
	}
	s.initHistograms()
	if s.writes, s.Replayed, err = openStore(cfg.Store); err != nil {
		return nil, fmt.Errorf("mockservice: %w", err)
	}

	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collector{s}, s.queueWait, s.service,
	)
	return s, nil
}

// initHistograms creates each station's histograms, so that they are
// exported before the first request, and hands the station its own
// observers: no label lookup per request.
func (s *Service) initHistograms() {
	for _, st := range []*Station{s.enrichment, s.records} {
		st.Observe(s.queueWait.WithLabelValues(st.name), s.service.WithLabelValues(st.name))
	}
}

// Registry returns the service's metrics registry.
func (s *Service) Registry() *prometheus.Registry { return s.registry }

// Config returns the configuration the service was built with.
func (s *Service) Config() config.Config { return s.cfg }

// Station returns the station called name (api.Enrichment or api.Records),
// or nil.
func (s *Service) Station(name string) *Station {
	switch name {
	case api.Enrichment:
		return s.enrichment
	case api.Records:
		return s.records
	}
	return nil
}

// SetProfile switches both stations to the named profile.
func (s *Service) SetProfile(name string) error {
	p, ok := s.profiles[name]
	if !ok {
		return fmt.Errorf("unknown profile %q: valid profiles are %s", name, strings.Join(s.cfg.ProfileNames(), ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profile = name
	s.enrichment.SetDistribution(p.enrichment)
	s.records.SetDistribution(p.records)
	s.live[api.Enrichment], s.live[api.Records] = s.cfg.Profiles[name].Enrichment, s.cfg.Profiles[name].Records
	return nil
}

// Reset clears counters, high-water marks, histograms and stored writes, and
// re-seeds both stations with the configured seed, so the next run starts
// as the first did. The profile is kept.
func (s *Service) Reset() error { return s.ResetSeed(s.cfg.Seed) }

// ResetSeed is Reset with another seed: the enrichment station draws from
// seed, the system of record from api.RecordsSeed(seed) (a stream of its
// own, so the two stations, and consecutive seeds, draw different
// sequences). It fails only when a store file cannot be emptied; the rest
// is reset regardless.
func (s *Service) ResetSeed(seed uint32) error {
	s.mu.Lock()
	s.seed = seed
	s.mu.Unlock()
	err := s.writes.reset()
	s.seq.reset()
	s.enrichment.Reset(seed)
	s.records.Reset(api.RecordsSeed(seed))
	s.log.Reset()
	s.queueWait.Reset()
	s.service.Reset()
	s.initHistograms()
	return err
}

// Stats returns a snapshot of the service.
func (s *Service) Stats() api.Stats {
	stored, dups := s.writes.counts()
	s.mu.Lock()
	st := api.Stats{Profile: s.profile, TimeScale: s.cfg.TimeScale, StoredWrites: stored,
		DuplicateWrites: dups, Seed: s.seed}
	s.mu.Unlock()
	st.Stations = map[string]api.StationStats{api.Enrichment: s.enrichment.Stats(), api.Records: s.records.Stats()}
	return st
}

// Stored reports whether a write of id was stored since the last reset, and
// whether it was stored complete.
func (s *Service) Stored(id string) (complete, ok bool) { return s.writes.get(id) }

// store records a served write; it reports whether the id was new. With a
// store file the write is durable before store returns, or err says why
// it is not stored.
func (s *Service) store(id string, complete bool) (bool, error) { return s.writes.put(id, complete) }
