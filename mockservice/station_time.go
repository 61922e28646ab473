package mockservice

import (
	"context"
	"time"
)

// How a station spends a service's time and orders near-simultaneous
// events: the timers of a service, precise at the end when asked, and the
// tie window in which a planned completion counts as before an arrival.

// preciseSlice is how much of a service precise timers sleep in the
// kernel: more than the runtime timers' lateness, little enough that a
// thread per service in it is cheap.
const preciseSlice = 2 * time.Millisecond

// serve holds the worker until end; with CancelOnDisconnect it gives up
// when the client leaves, and reports true. With PreciseTimers the last
// preciseSlice is slept in the kernel (see config.Station.PreciseTimers).
func (s *Station) serve(ctx context.Context, end time.Time) (cancelled bool) {
	coarse := time.Until(end)
	if s.cfg.PreciseTimers {
		coarse -= preciseSlice
	}
	if coarse > 0 {
		timer := time.NewTimer(coarse)
		if s.cfg.CancelOnDisconnect {
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return true
			}
		} else {
			<-timer.C
		}
	}
	if s.cfg.PreciseTimers {
		if s.cfg.CancelOnDisconnect && ctx.Err() != nil {
			return true
		}
		if d := time.Until(end); d > 0 {
			preciseSleep(d)
		}
	}
	return false
}

// dueWithinTieLocked reports the earliest planned completion if it falls
// within the tie window of arrived (or is already overdue). s.mu must be
// held.
func (s *Station) dueWithinTieLocked(arrived time.Time) (time.Time, bool) {
	if s.cfg.TieWindow <= 0 || len(s.ends) == 0 {
		return time.Time{}, false
	}
	earliest := s.ends[0]
	for _, e := range s.ends[1:] {
		if e.Before(earliest) {
			earliest = e
		}
	}
	// Give up waiting once the window (plus the completion's timer slack)
	// has passed without the completion.
	limit := arrived.Add(s.cfg.TieWindow)
	if earliest.After(limit) || time.Now().After(limit.Add(s.cfg.TieWindow)) {
		return time.Time{}, false
	}
	return earliest, true
}
