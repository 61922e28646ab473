package mockservice

import (
	"sync"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// RequestLog records, per request id, when it arrived, started and finished,
// so a load generator can join its view with the server's. It keeps at most
// cap entries since the last reset and counts the rest as dropped. A nil
// *RequestLog records nothing. It is safe for concurrent use.
type RequestLog struct {
	mu      sync.Mutex
	cap     int
	entries []*api.RequestEntry
	dropped int
}

// NewRequestLog returns a log of at most capacity entries.
func NewRequestLog(capacity int) *RequestLog { return &RequestLog{cap: capacity} }

func (l *RequestLog) add(id, service string, at time.Time) *api.RequestEntry {
	if l == nil || id == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= l.cap {
		l.dropped++
		return nil
	}
	e := &api.RequestEntry{ID: id, Service: service, Arrived: at}
	l.entries = append(l.entries, e)
	return e
}

func (l *RequestLog) started(e *api.RequestEntry, at time.Time) {
	if l == nil || e == nil {
		return
	}
	l.mu.Lock()
	e.Started = &at
	l.mu.Unlock()
}

func (l *RequestLog) end(e *api.RequestEntry, started, finished time.Time, out api.Outcome) {
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
func (l *RequestLog) Snapshot() api.RequestLogSnapshot {
	snap := api.RequestLogSnapshot{Now: time.Now(), Entries: []api.RequestEntry{}}
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
