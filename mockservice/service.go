// Package mockservice plays the two dependencies of the lab over real HTTP:
// an enrichment API that tolerates many concurrent calls and a system of
// record with a few workers, a short queue and 503 beyond it. Each is a
// Station: N workers in front of a bounded FIFO queue, with seeded service
// times from a switchable latency profile. Work is not cancelled when a
// client gives up (unless configured); such work is counted as wasted.
package mockservice

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Response headers that report a request's passage through its station.
const (
	HeaderQueueWait = "X-Queue-Wait-Ms"
	HeaderService   = "X-Service-Ms"
)

// ErrForcedShutdown is returned by Serve when in-flight work did not finish
// within the shutdown timeout and connections were closed under it.
var ErrForcedShutdown = errors.New("mockservice: shutdown timeout passed with requests in flight")

// Stats is the JSON of GET /admin/stats.
type Stats struct {
	Profile         string                  `json:"profile"`
	TimeScale       float64                 `json:"time_scale"`
	StoredWrites    int                     `json:"stored_writes"`
	DuplicateWrites int                     `json:"duplicate_writes"`
	Stations        map[string]StationStats `json:"stations"`
}

// Service is the mock dependencies service: both stations, the store of
// writes, the admin routes and the metrics. It is safe for concurrent use.
type Service struct {
	cfg        Config
	profiles   map[string]builtProfile
	enrichment *Station
	records    *Station
	registry   *prometheus.Registry
	queueWait  *prometheus.HistogramVec
	service    *prometheus.HistogramVec

	log *RequestLog

	mu         sync.Mutex
	profile    string
	stored     map[string]bool // id -> complete
	duplicates int
}

// New validates cfg and builds the service with its own Prometheus registry
// (Go and process collectors included).
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mockservice: %w", err)
	}
	s := &Service{cfg: cfg, profiles: map[string]builtProfile{}, profile: cfg.Profile, stored: map[string]bool{}}
	for name, p := range cfg.Profiles {
		b, err := p.build()
		if err != nil { // unreachable after Validate, kept for safety
			return nil, fmt.Errorf("mockservice: profiles.%s.%w", name, err)
		}
		s.profiles[name] = b
	}
	cur := s.profiles[cfg.Profile]
	var err error
	// Distinct seeds so the two stations do not draw the same sequence.
	if s.enrichment, err = NewStation(Enrichment, cfg.Enrichment, cur.enrichment, cfg.Seed, cfg.TimeScale); err != nil {
		return nil, err
	}
	if s.records, err = NewStation(Records, cfg.Records, cur.records, cfg.Seed+1, cfg.TimeScale); err != nil {
		return nil, err
	}
	s.queueWait, s.service = newHistograms()
	observe := func(name string, wait, service time.Duration) {
		s.queueWait.WithLabelValues(name).Observe(wait.Seconds())
		s.service.WithLabelValues(name).Observe(service.Seconds())
	}
	s.enrichment.observe, s.records.observe = observe, observe
	if cfg.RequestLogCap > 0 {
		s.log = NewRequestLog(cfg.RequestLogCap)
		s.enrichment.log, s.records.log = s.log, s.log
	}
	s.initHistograms()

	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collector{s}, s.queueWait, s.service,
	)
	return s, nil
}

func (s *Service) initHistograms() {
	for _, n := range []string{Enrichment, Records} {
		s.queueWait.WithLabelValues(n)
		s.service.WithLabelValues(n)
	}
}

// Registry returns the service's metrics registry.
func (s *Service) Registry() *prometheus.Registry { return s.registry }

// Config returns the configuration the service was built with.
func (s *Service) Config() Config { return s.cfg }

// Station returns the station called name (Enrichment or Records), or nil.
func (s *Service) Station(name string) *Station {
	switch name {
	case Enrichment:
		return s.enrichment
	case Records:
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
	return nil
}

// Reset clears counters, high-water marks, histograms and stored writes, and
// re-seeds both stations, so the next run starts as the first did. The
// profile is kept.
func (s *Service) Reset() {
	s.mu.Lock()
	s.stored = map[string]bool{}
	s.duplicates = 0
	s.mu.Unlock()
	s.enrichment.Reset()
	s.records.Reset()
	s.log.Reset()
	s.queueWait.Reset()
	s.service.Reset()
	s.initHistograms()
}

// Stats returns a snapshot of the service.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	st := Stats{Profile: s.profile, TimeScale: s.cfg.TimeScale, StoredWrites: len(s.stored), DuplicateWrites: s.duplicates}
	s.mu.Unlock()
	st.Stations = map[string]StationStats{Enrichment: s.enrichment.Stats(), Records: s.records.Stats()}
	return st
}

// store records a served write; it reports whether the id was new.
func (s *Service) store(id string, complete bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.stored[id]; dup {
		s.duplicates++
		return false
	}
	s.stored[id] = complete
	return true
}

// Handler returns the service's routes.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /enrich", s.handleEnrich)
	mux.HandleFunc("POST /records", s.handleRecords)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry}))
	mux.Handle("GET /admin/profile", s.admin(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.profile
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"profile": p, "profiles": s.cfg.ProfileNames()})
	}))
	mux.Handle("PUT /admin/profile", s.admin(s.handleSetProfile))
	mux.Handle("POST /admin/reset", s.admin(func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		writeJSON(w, http.StatusOK, map[string]bool{"reset": true})
	}))
	mux.Handle("GET /admin/stats", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	}))
	mux.Handle("GET /admin/requests", s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.log.Snapshot())
	}))
	return mux
}

type enrichRequest struct {
	RecordID string `json:"record_id"`
	Step     int    `json:"step"`
}

type writeRequest struct {
	ID       string `json:"id"`
	Complete *bool  `json:"complete"`
}

func (s *Service) handleEnrich(w http.ResponseWriter, r *http.Request) {
	defer s.enrichment.Open()()
	if !validRequestID(w, r) {
		return
	}
	var req enrichRequest
	if !decode(w, r, &req) {
		return
	}
	if req.RecordID == "" {
		writeError(w, http.StatusBadRequest, "record_id: missing")
		return
	}
	if req.Step < 1 {
		writeError(w, http.StatusBadRequest, "step: missing or below 1")
		return
	}
	res := s.enrichment.Do(r.Context(), r.Header.Get(HeaderRequestID))
	if !respondRejected(w, s.cfg.Enrichment, res) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"record_id": req.RecordID, "step": req.Step,
		"value": fmt.Sprintf("enriched:%s:%d", req.RecordID, req.Step)})
}

func (s *Service) handleRecords(w http.ResponseWriter, r *http.Request) {
	defer s.records.Open()()
	if !validRequestID(w, r) {
		return
	}
	var req writeRequest
	if !decode(w, r, &req) {
		return
	}
	if req.ID == "" {
		writeError(w, http.StatusBadRequest, "id: missing")
		return
	}
	if req.Complete == nil {
		writeError(w, http.StatusBadRequest, "complete: missing")
		return
	}
	res := s.records.Do(r.Context(), r.Header.Get(HeaderRequestID))
	if !respondRejected(w, s.cfg.Records, res) {
		return
	}
	if s.store(req.ID, *req.Complete) {
		writeJSON(w, http.StatusCreated, map[string]any{"id": req.ID, "stored": true})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": req.ID, "stored": false, "duplicate": true})
}

func validRequestID(w http.ResponseWriter, r *http.Request) bool {
	if len(r.Header.Get(HeaderRequestID)) > maxRequestIDBytes {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: longer than %d bytes", HeaderRequestID, maxRequestIDBytes))
		return false
	}
	return true
}

// respondRejected sets the timing headers and answers refusals and
// cancellations; it reports whether the request was served.
func respondRejected(w http.ResponseWriter, cfg StationConfig, res Result) bool {
	w.Header().Set(HeaderQueueWait, strconv.FormatFloat(float64(res.QueueWait)/1e6, 'f', 3, 64))
	w.Header().Set(HeaderService, strconv.FormatFloat(float64(res.Service)/1e6, 'f', 3, 64))
	switch res.Outcome {
	case OutcomeRejected:
		w.Header().Set("Retry-After", "1")
		writeError(w, cfg.RejectStatus, "queue full")
		return false
	case OutcomeCancelled:
		// The client is gone; this answer is for the log, if anyone.
		writeError(w, 499, "cancelled: client left")
		return false
	}
	return true
}

func (s *Service) handleSetProfile(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Profile string `json:"profile"`
	}
	if !decode(w, r, &req) {
		return
	}
	if err := s.SetProfile(req.Profile); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"profile": req.Profile})
}

// admin guards a route with the bearer token, when one is configured.
func (s *Service) admin(h http.HandlerFunc) http.Handler {
	if s.cfg.AdminToken == "" {
		return h
	}
	want := []byte(bearerPrefix + s.cfg.AdminToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="loadlab-mock-admin"`)
			writeError(w, http.StatusUnauthorized, "admin route needs Authorization: Bearer <token>")
			return
		}
		h(w, r)
	})
}

// decode reads one JSON object of at most MaxBodyBytes into v, answering
// 413 or 400 itself when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil {
		// Exactly one value: trailing data is malformed input.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON object")
			if terr != nil {
				err = terr
			}
		}
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", MaxBodyBytes))
		return false
	}
	writeError(w, http.StatusBadRequest, "malformed JSON: "+err.Error())
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// Serve answers HTTP on ln until ctx is done, then stops accepting and lets
// requests in flight finish within the configured shutdown timeout. It
// returns nil after a clean shutdown, ErrForcedShutdown if the timeout cut
// requests short, or the server's error.
func (s *Service) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: defaultReadHeaderTimeout,
		ReadTimeout:       defaultReadTimeout,
		IdleTimeout:       defaultIdleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mockservice: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return ErrForcedShutdown
		}
		return fmt.Errorf("mockservice: shutdown: %w", err)
	}
	return nil
}

// Start serves a new service for cfg on cfg.Listen (e.g. 127.0.0.1:0) in
// the background. It returns the service, its base URL, and stop, which
// shuts it down as SIGTERM would and returns Serve's result.
func Start(cfg Config) (svc *Service, baseURL string, stop func() error, err error) {
	if svc, err = New(cfg); err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, "", nil, fmt.Errorf("mockservice: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx, ln) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() { cancel(); result = <-done })
		return result
	}
	return svc, "http://" + ln.Addr().String(), stop, nil
}
