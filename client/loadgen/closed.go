package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// runClosed runs the virtual users (a segment's: user u when u % n is its
// index): user i first sends at second i mod 5,
// then waits for its outcome and thinks before sending again. In step mode
// the next send is at the start of the second it falls in. After a
// rejection or a drop a user waits at least one model second (one step of
// the model), so that a think time of 0 cannot spin.
func (g *generator) runClosed(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sc := g.cfg.Schedule
	think := time.Duration(sc.Think) * g.unit
	var next atomic.Int64
	// A segment's users are every n-th; its request ids, local × n +
	// index, are unique across the segments.
	seg := g.cfg.Segment
	n := seg.count()
	for u := seg.Index; u < sc.Users; u += n {
		wg.Go(func() {
			c := g.client.newConn()
			at := g.start.Add(time.Duration(u%closedStagger) * g.unit)
			for at.Before(g.end) {
				if g.clock.SleepUntil(ctx, at) != nil {
					return
				}
				req := g.newRequest(int(next.Add(1)-1)*n+seg.Index, at)
				done := at.Add(g.unit) // dropped: the next step
				if ok := g.admitCapped(req); ok {
					reply, replied := g.send(ctx, c, req)
					switch reply {
					case ReplyGaveUp:
						done = req.deadline.Add(think)
					case ReplyRejected:
						done = later(replied.Add(think), at.Add(g.unit))
					default:
						done = replied.Add(think)
					}
				}
				if ctx.Err() != nil {
					return
				}
				at = done
				if g.cfg.Arrivals == ArrivalsStep {
					at = g.start.Add(at.Sub(g.start).Truncate(g.unit))
				}
			}
		})
	}
}
