package records

import (
	"context"
	"sync"
	"time"
)

// waitStart waits for at, when it is not zero, unless ctx ends first, and
// returns the time the run's clock starts.
func waitStart(ctx context.Context, at time.Time) time.Time {
	for !at.IsZero() {
		d := time.Until(at) // by the wall clock: at comes from another process
		if d <= 0 {
			break
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return time.Now()
		case <-timer.C:
		}
	}
	return time.Now()
}

// issue begins records, each as a slot of the inFlight frees, until the
// records cap, the run's duration, Config.Stop or ctx ends it; it waits for every begun
// record to end and returns how many began. Once the duration has passed
// no record begins, whichever the loop was waiting for.
func (r *runner) issue(ctx context.Context, inFlight int) int {
	t := r.tally
	slots := make(chan struct{}, inFlight)
	limit := r.cfg.scaled(r.cfg.Duration)
	var deadline <-chan time.Time
	if r.cfg.Duration > 0 {
		timer := time.NewTimer(limit - time.Since(t.start))
		defer timer.Stop()
		deadline = timer.C
	}
	var wg sync.WaitGroup
	begun := 0
	for i := range r.cfg.Records {
		slot := false
		select {
		case <-ctx.Done():
		case <-r.cfg.Stop:
		case <-deadline:
		case slots <- struct{}{}:
			slot = true
		}
		at := time.Since(t.start)
		if !slot || ctx.Err() != nil || stopped(r.cfg.Stop) || (r.cfg.Duration > 0 && at >= limit) {
			if slot {
				<-slots
			}
			break
		}
		begun++
		wg.Go(func() {
			defer func() { <-slots }()
			began := t.begin(at)
			st, id := r.process(ctx, i)
			t.end(st, id, began)
		})
	}
	wg.Wait()
	return begun
}

// stopped says whether stop is closed (a nil stop never is).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
