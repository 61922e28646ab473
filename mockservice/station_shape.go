package mockservice

import (
	"fmt"
	"time"
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
