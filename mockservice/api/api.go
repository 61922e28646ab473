// Package api is the wire contract of the loadlab mock service: its routes,
// headers, request bodies, outcome names, the JSON of its admin routes, the
// names of its metrics, and a Client for the admin, health and metrics
// routes. The server (package mockservice) and every client import it;
// clients never import the server.
package api

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Routes of the mock service.
const (
	PathEnrich        = "/enrich"       // POST EnrichRequest: the enrichment API
	PathRecords       = "/records"      // POST WriteRequest: the system of record
	PathRecord        = "/records/{id}" // GET: 200 StoredRecord, 404 when absent (admin rules)
	PathHealthz       = "/healthz"
	PathMetrics       = "/metrics"
	PathAdminProfile  = "/admin/profile"  // GET, or PUT ProfileRequest
	PathAdminReset    = "/admin/reset"    // POST
	PathAdminConfig   = "/admin/config"   // GET, or PATCH a partial update of the live settings
	PathAdminStats    = "/admin/stats"    // GET Stats
	PathAdminRequests = "/admin/requests" // GET RequestLogSnapshot
)

// Headers of the contract.
const (
	// HeaderRequestID names a request in the station's request log.
	HeaderRequestID = "X-Request-Id"
	// HeaderReplay gives a request's service time in milliseconds (lab
	// time) to a mock service started in replay mode (config.Replay).
	HeaderReplay = "X-Loadlab-Replay-Ms"
	// HeaderReplaySeq gives a replayed request's place in its client's
	// issue order since the last reset (0, 1, …); the station admits them
	// in that order (replay mode only).
	HeaderReplaySeq = "X-Loadlab-Replay-Seq"
	// MaxReplay bounds a replayed service time.
	MaxReplay = time.Hour
	// HeaderQueueWait and HeaderService report, in milliseconds, a
	// request's wait for a worker and the time the worker was held.
	HeaderQueueWait = "X-Queue-Wait-Ms"
	HeaderService   = "X-Service-Ms"
	// BearerPrefix starts the Authorization header of the admin routes.
	BearerPrefix = "Bearer "
	// HeaderMock and HeaderTimeScale identify a loadlab mock service: it
	// answers OPTIONS on any of its load routes (and GET /healthz) with
	// its name and version ("loadlab-mock/<version>") and its time scale.
	// A client asks this way, on the load path itself, before it sends an
	// admin, log or metrics request, so a foreign target is asked nothing
	// beyond the path it is loaded on.
	HeaderMock      = "X-Loadlab-Mock"
	HeaderTimeScale = "X-Loadlab-Time-Scale"
)

// ServiceName is what a loadlab mock service calls itself.
const ServiceName = "loadlab-mock"

// Limits of the contract.
const (
	// MaxBodyBytes is the largest request body the service reads (413 beyond).
	MaxBodyBytes = 64 << 10
	// MaxRequestIDBytes is the longest X-Request-Id accepted (400 beyond).
	MaxRequestIDBytes = 128
	// StatusClientLeft answers a request whose work was dropped because its
	// client left (nginx's 499); nobody is there to read it.
	StatusClientLeft = 499
)

// DefaultAddress is where the mock service listens unless told otherwise.
const DefaultAddress = "127.0.0.1:8080"

// Names of the two stations (dependencies), as in the label service="…".
const (
	Enrichment = "enrichment"
	Records    = "records"
)

// Stations lists the station names in a stable order.
var Stations = []string{Enrichment, Records}

// Rejected reports whether status is one of the refusals a station answers
// when its queue is full (503, or 429 when so configured).
func Rejected(status int) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests
}

// EnrichRequest is the body of POST /enrich.
type EnrichRequest struct {
	RecordID string `json:"record_id"`
	Step     int    `json:"step"`
}

// Check names the first missing field.
func (r EnrichRequest) Check() error {
	switch {
	case r.RecordID == "":
		return errors.New("record_id: missing")
	case r.Step < 1:
		return errors.New("step: missing or below 1")
	}
	return nil
}

// WriteRequest is the body of POST /records. Complete is required.
type WriteRequest struct {
	ID       string `json:"id"`
	Complete *bool  `json:"complete"`
}

// Check names the first missing field.
func (r WriteRequest) Check() error {
	switch {
	case r.ID == "":
		return errors.New("id: missing")
	case r.Complete == nil:
		return errors.New("complete: missing")
	}
	return nil
}

// Health is the JSON of GET /healthz.
type Health struct {
	Status    string  `json:"status"`  // "ok"
	Service   string  `json:"service"` // ServiceName
	Version   string  `json:"version"`
	TimeScale float64 `json:"time_scale"`
}

// RecordsSeed is the seed of the system of record's generator when the
// enrichment API's is seed: a stream of its own, which no enrichment seed
// near seed shares (seed+1 would be the next run's enrichment stream).
func RecordsSeed(seed uint32) uint32 { return seed + 0x9e3779b9 }

// CopySeed is the seed of the generator of the virtual copy called name
// when the copies' seed is seed: a stream of the copy's own (the FNV-1a
// hash of its name added), the same whatever the other copies are or the
// order they are listed in.
func CopySeed(seed uint32, name string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return seed + h.Sum32()
}

// ResetRequest is the optional body of POST /admin/reset. Without a seed the
// stations are re-seeded with the configured one.
type ResetRequest struct {
	Seed *uint32 `json:"seed,omitempty"`
}

// StoredRecord is the JSON of GET /records/{id}: a write the system of
// record stored since the last reset.
type StoredRecord struct {
	ID       string `json:"id"`
	Complete bool   `json:"complete"`
}

// ProfileRequest is the body of PUT /admin/profile.
type ProfileRequest struct {
	Profile string `json:"profile"`
}

// Outcome is how a request at a station ended. Every request that reaches
// a station ends in exactly one outcome.
type Outcome string

const (
	// OutcomeServed: the work was done and the client was still there.
	OutcomeServed Outcome = "served"
	// OutcomeRejected: the queue was full; refused at once, no work done.
	OutcomeRejected Outcome = "rejected"
	// OutcomeServedAfterClientLeft: the client gave up (disconnected or
	// timed out) before the work finished, and the work was done anyway.
	// Its worker time counts as wasted.
	OutcomeServedAfterClientLeft Outcome = "served_after_client_left"
	// OutcomeCancelled: the client gave up and the station was configured
	// to cancel on disconnect, so the work was dropped (from the queue, or
	// part-way through service; that part counts as wasted).
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every Outcome, in a stable order.
var Outcomes = []Outcome{OutcomeServed, OutcomeRejected, OutcomeServedAfterClientLeft, OutcomeCancelled}

// Time scale: every service time (and every client-side duration) is
// multiplied by it; 1 is real time. Both sides check it the same way.
const (
	MinTimeScale = 1e-4
	MaxTimeScale = 1000.0
)

// CheckTimeScale reports whether v is a usable time scale.
func CheckTimeScale(v float64) error {
	if !(v >= MinTimeScale && v <= MaxTimeScale) {
		return fmt.Errorf("%v is not in [%g, %g]", v, MinTimeScale, MaxTimeScale)
	}
	return nil
}

// DurationBuckets are the buckets of every duration histogram loadlab
// exports, server and client side alike, so that their bins line up: 25
// exponential buckets from 1 ms to 10 s.
var DurationBuckets = prometheus.ExponentialBucketsRange(0.001, 10, 25)
