package loadgen

import (
	"context"
	"sync"
	"time"
)

// runOpen sends every arrival of the pacer's schedule when it is due,
// whatever the replies do. A pool of senders takes the arrivals: a free
// sender takes the next one; with none free a new sender joins the pool,
// up to the in-flight cap, beyond which the arrival is dropped. An arrival
// the pacer reaches later than the late threshold (a generator short of
// CPU), or that falls due as the run ends, is behind: counted, not sent.
// Every arrival is sent, dropped or behind. A segment's generator does
// this for its arrivals only: hit % n == its index.
func (g *generator) runOpen(ctx context.Context, p Pacer) {
	var wg sync.WaitGroup
	defer wg.Wait()
	work := make(chan *request) // unbuffered: a send succeeds only to an idle sender
	defer close(work)
	senders := 0
	late := time.Duration(g.cfg.LateThreshold * float64(g.unit))
	// A segment's arrivals are every n-th of the schedule: the others are
	// not this generator's at all (not scheduled, dropped or behind here).
	n := g.cfg.Segment.count()
	for hit := g.cfg.Segment.Index; ; hit += n {
		off, ok := p.Due(hit)
		if !ok {
			return
		}
		sched := g.start.Add(off)
		if g.clock.SleepUntil(ctx, sched) != nil {
			// The run ended first: arrivals already due are behind.
			stopped := g.clock.Now()
			if stopped.After(g.end) {
				stopped = g.end
			}
			for ok && sched.Before(stopped) {
				g.behindOne(sched)
				hit += n
				off, ok = p.Due(hit)
				sched = g.start.Add(off)
			}
			return
		}
		if g.clock.Now().Sub(sched) > late {
			g.behindOne(sched)
			continue
		}
		req := g.newRequest(hit, sched)
		select {
		case work <- req: // an idle sender took it
			g.admitted(req)
			continue
		default:
		}
		if senders >= g.inFlightCap {
			g.dropOne(sched)
			continue
		}
		senders++
		g.mu.Lock()
		g.senders = senders
		g.mu.Unlock()
		g.admitted(req)
		wg.Go(func() {
			c := g.client.newConn()
			g.send(ctx, c, req)
			for r := range work {
				g.send(ctx, c, r)
			}
		})
	}
}
