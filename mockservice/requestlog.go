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
//
// Its times are on one clock: the monotonic clock, anchored to the wall
// clock when the log was made or last reset. A station compares times on
// the monotonic clock (a waiter starts at its predecessor's planned end,
// or at its own arrival if later), while the wall clock may be slewed
// between two readings; written as wall times, a start computed from one
// reading could fall nanoseconds before an arrival read from the other.
type RequestLog struct {
	mu      sync.Mutex
	cap     int
	base    time.Time // the anchor: a wall reading with its monotonic one
	entries []*api.RequestEntry
	dropped int
}

// NewRequestLog returns a log of at most capacity entries.
func NewRequestLog(capacity int) *RequestLog {
	return &RequestLog{cap: capacity, base: time.Now()}
}

// stamp is at on the log's clock; l.mu must be held.
func (l *RequestLog) stamp(at time.Time) time.Time {
	return l.base.Add(at.Sub(l.base)).Round(0)
}

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
	e := &api.RequestEntry{ID: id, Service: service, Arrived: l.stamp(at)}
	l.entries = append(l.entries, e)
	return e
}

func (l *RequestLog) started(e *api.RequestEntry, at time.Time) {
	if l == nil || e == nil {
		return
	}
	l.mu.Lock()
	at = l.stamp(at)
	e.Started = &at
	l.mu.Unlock()
}

func (l *RequestLog) end(e *api.RequestEntry, started, finished time.Time, out api.Outcome) {
	if l == nil || e == nil {
		return
	}
	l.mu.Lock()
	if !started.IsZero() {
		started = l.stamp(started)
		e.Started = &started
	}
	finished = l.stamp(finished)
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
	snap.Now = l.stamp(snap.Now)
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
	l.entries, l.dropped, l.base = nil, 0, time.Now()
	l.mu.Unlock()
}
