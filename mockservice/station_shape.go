package mockservice

import (
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/mockservice/config"
)

// Shape is a station's live settings that an admin request may change:
// workers, queue slots (config.UnboundedQueue: no limit) and the status of
// a refusal.
type Shape struct {
	Workers, Queue, RejectStatus int
}

// Shape returns the station's live settings.
func (s *Station) Shape() Shape {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Shape{Workers: s.cfg.Workers, Queue: s.cfg.Queue, RejectStatus: s.cfg.RejectStatus}
}

// SetShape changes the station's workers, queue slots and refusal status
// at once, validated as at start-up. More workers take queued requests at
// once (in FIFO order, starting now); fewer let the services in progress
// finish and hand no worker over until the busy ones are within the new
// count. A smaller queue keeps the requests already waiting and refuses
// new ones until it has room.
func (s *Station) SetShape(sh Shape) error {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	cfg.Workers, cfg.Queue, cfg.RejectStatus = sh.Workers, sh.Queue, sh.RejectStatus
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s.%w", s.name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Workers, s.cfg.Queue, s.cfg.RejectStatus = cfg.Workers, cfg.Queue, cfg.RejectStatus
	for s.busy < s.cfg.Workers && s.queue.Len() > 0 {
		w := s.queue.Remove(s.queue.Front()).(*waiter)
		w.start = time.Now()
		w.planned = s.startLocked(w.start, w.replay)
		w.granted = true
		close(w.ready)
	}
	return nil
}

// SetSlowdown makes a drawn service time depend on how many requests are
// in service: a service that starts with n in progress, itself included,
// takes its draw × factors[n-1] (the last factor beyond the list; each a
// number > 0, so a service may also speed up); nil: the draw as it is. A
// replayed service time is served as given. It applies to services that
// start from now on; the draws themselves, and their order, do not change.
func (s *Station) SetSlowdown(factors []float64) error {
	if err := config.ValidSlowdown(factors); err != nil {
		return fmt.Errorf("%s.%w", s.name, err)
	}
	s.mu.Lock()
	s.slowdown = slices.Clone(factors)
	s.mu.Unlock()
	return nil
}

// Observe makes the station observe every served or dropped request's
// queue wait and service time, in seconds, with wait and service (a
// service's histograms, by station); both nil: none.
func (s *Station) Observe(wait, service prometheus.Observer) {
	if wait == nil || service == nil {
		s.observers.Store(nil)
		return
	}
	s.observers.Store(&observers{wait: wait, service: service})
}
