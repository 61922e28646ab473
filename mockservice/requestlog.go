package mockservice

import (
	"sync"
	"time"
)

// HeaderRequestID names a request in the station's request log.
const HeaderRequestID = "X-Request-Id"

// Limits of the request log.
const (
	DefaultRequestLogCap = 100_000
	maxRequestIDBytes    = 128
)

// RequestEntry is one request's passage through a station, as the server saw
// it. Started is nil for requests never served; Finished and Outcome are
// empty while the request is queued or in service.
type RequestEntry struct {
	ID       string     `json:"id"`
	Service  string     `json:"service"`
	Arrived  time.Time  `json:"arrived"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	Outcome  Outcome    `json:"outcome,omitempty"`
}

// RequestLogSnapshot is the JSON of GET /admin/requests.
type RequestLogSnapshot struct {
	// Now is the server's clock when the snapshot was taken.
	Now     time.Time      `json:"now"`
	Entries []RequestEntry `json:"entries"`
	// Dropped counts requests not logged because the log was full.
	Dropped int `json:"dropped"`
}

// RequestLog records, per request id, when it arrived, started and finished,
// so a load generator can join its view with the server's. It keeps at most
// cap entries since the last reset and counts the rest as dropped. A nil
// *RequestLog records nothing. It is safe for concurrent use.
type RequestLog struct {
	mu      sync.Mutex
	cap     int
	entries []*RequestEntry
	dropped int
}

// NewRequestLog returns a log of at most capacity entries.
func NewRequestLog(capacity int) *RequestLog { return &RequestLog{cap: capacity} }

func (l *RequestLog) add(id, service string, at time.Time) *RequestEntry {
	if l == nil || id == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= l.cap {
		l.dropped++
		return nil
	}
	e := &RequestEntry{ID: id, Service: service, Arrived: at}
	l.entries = append(l.entries, e)
	return e
}

func (l *RequestLog) started(e *RequestEntry, at time.Time) {
	if l == nil || e == nil {
		return
	}
	l.mu.Lock()
	e.Started = &at
	l.mu.Unlock()
}

func (l *RequestLog) end(e *RequestEntry, started, finished time.Time, out Outcome) {
	if l == nil || e == nil {
		return
	}
	l.mu.Lock()
	if !started.IsZero() {
		e.Started = &started
	}
	e.Finished, e.Outcome = &finished, out
	l.mu.Unlock()
}

// Snapshot copies the log.
func (l *RequestLog) Snapshot() RequestLogSnapshot {
	snap := RequestLogSnapshot{Now: time.Now(), Entries: []RequestEntry{}}
	if l == nil {
		return snap
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	snap.Dropped = l.dropped
	for _, e := range l.entries {
		snap.Entries = append(snap.Entries, *e)
	}
	return snap
}

// Reset empties the log.
func (l *RequestLog) Reset() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.entries, l.dropped = nil, 0
	l.mu.Unlock()
}
