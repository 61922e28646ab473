package loadgen

import (
	"context"
	"math"
	"time"

	"github.com/loadlab/loadlab/client/sendpool"
)

// runOpen sends every arrival of the pacer's schedule when it is due,
// whatever the replies do. The pacer puts each due arrival in a backlog
// that a pool of senders, each with a connection of its own, takes from
// in order. The pool grows only when more senders help: the backlog's
// oldest arrival has waited growAfter with no sender free, the backlog is
// not shrinking, and the process has CPU to spare (sendpool.Pool.Grow);
// an arrival that would take the requests awaiting an outcome past the
// in-flight cap is dropped. An arrival not taken within the late
// threshold of its scheduled time (a generator short of CPU), or still
// waiting when the run ends, is behind: counted, not sent. Every arrival
// is sent, dropped or behind. A segment's generator does this for its
// arrivals only: hit % n == its index.
func (g *generator) runOpen(ctx context.Context, p Pacer) {
	late := time.Duration(g.cfg.LateThreshold * float64(g.unit))
	grow := growAfter(late)
	pool := sendpool.New(sendpool.Config[conn, *request]{
		Cap: g.inFlightCap, Late: late, Grow: grow, MaxDials: maxDials,
		Open: g.openConn,
		Send: func(c conn, req *request) {
			if runEnded(ctx) || g.clock.Now().Sub(req.scheduled) > late {
				g.behindOne(req.scheduled)
				return
			}
			g.admitted(req)
			g.send(ctx, c, req)
		},
		Abandon: func(req *request) { g.behindOne(req.scheduled) },
		Due:     func(req *request) time.Time { return req.scheduled }, CPU: g.cfg.CPU,
	})
	defer func() {
		pool.Close()
		g.mu.Lock()
		g.senders = pool.Senders()
		g.mu.Unlock()
	}()
	pool.Warm(ctx, g.warmSenders(grow), g.start)
	// A segment's arrivals are every n-th of the schedule: the others are
	// not this generator's at all (not scheduled, dropped or behind here).
	n := g.cfg.Segment.count()
	hit := g.cfg.Segment.Index
	off, ok := p.Due(hit)
	for ok {
		sched := g.start.Add(off)
		now := g.clock.Now()
		pool.Grow(now)
		wake := sched
		if at, short := pool.GrowthDue(now); short && at.Before(wake) {
			wake = at
		}
		if g.clock.SleepUntil(ctx, wake) != nil {
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
		now = g.clock.Now()
		if wake.Before(sched) {
			continue // woken to see whether the pool must grow
		}
		switch {
		case now.Sub(sched) > late:
			g.behindOne(sched)
		case pool.Outstanding() >= g.inFlightCap:
			g.dropOne(sched)
		default:
			pool.Queue(g.newRequest(hit, sched), now)
		}
		hit += n
		off, ok = p.Due(hit)
	}
	// The schedule is over; the arrivals still in the backlog wait for a
	// sender until the run ends.
	for pool.Waiting() > 0 {
		now := g.clock.Now()
		pool.Grow(now)
		at, short := pool.GrowthDue(now)
		if !short {
			at = now.Add(grow) // senders starting will take them
		}
		if g.clock.SleepUntil(ctx, at) != nil {
			return
		}
	}
}

// openConn is a new sender's connection, opened before its first request
// when the client can.
func (g *generator) openConn() conn {
	c := g.client.newConn()
	if d, ok := c.(dialer); ok {
		d.dial() // an error is the first request's to report
	}
	return c
}

// dialer is a conn that can open its connection before its first request.
type dialer interface {
	dial()
}

// warmSenders is how many senders the pool starts with: the arrivals of
// the schedule's peak rate over grow, at least one, at most maxDials.
func (g *generator) warmSenders(grow time.Duration) int {
	peak := float64(max(g.cfg.BaseRate, g.cfg.PeakRate)) / float64(g.cfg.Segment.count())
	n := int(math.Ceil(peak * float64(grow) / float64(g.unit)))
	return max(1, min(n, maxDials, g.inFlightCap))
}

// growAfter is how long the backlog's oldest arrival waits for a busy
// sender to come free before the pool grows: a millisecond, many times a
// loopback round trip and far less than a dial under load, at most a tenth
// of the late threshold. A sender that comes free within it sends the
// arrival sooner than a new connection would; a pool that grew at every
// arrival finding no sender free grew, on one core, to thousands of
// connections at a rate a few dozen carry, and their dials and cold
// connections took the CPU the schedule needed.
func growAfter(late time.Duration) time.Duration {
	return max(min(time.Millisecond, late/10), time.Microsecond)
}
