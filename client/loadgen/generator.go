package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// request is the generator's own record of one sent request.
type request struct {
	id        string
	scheduled time.Time
	sent      time.Time
	reply     Reply
	replied   time.Time
	deadline  time.Time
}

// generator is one run in progress: the schedule's state and every sent
// request's record. Its methods are safe for concurrent use.
type generator struct {
	cfg     Config
	clock   Clock
	unit    time.Duration
	start   time.Time
	end     time.Time
	http    *http.Client
	metrics *metrics

	mu       sync.Mutex
	reqs     []*request
	inFlight int
	dropped  []time.Duration // scheduled offsets of dropped arrivals
	late     int
	maxLag   time.Duration
	replies  map[Reply]int
}

// runOpen sends every arrival of the pacer's schedule when it is due,
// whatever the replies do.
func (g *generator) runOpen(ctx context.Context, wg *sync.WaitGroup, p Pacer) {
	for hit := 0; ; hit++ {
		off, ok := p.Due(hit)
		if !ok {
			return
		}
		sched := g.start.Add(off)
		if g.clock.SleepUntil(ctx, sched) != nil {
			return
		}
		req, ok := g.admit(hit, sched)
		if !ok {
			continue
		}
		wg.Go(func() { g.send(ctx, req) })
	}
}

// runClosed runs the virtual users: user i first sends at second i mod 5,
// then waits for its outcome and thinks before sending again. In step mode
// the next send is at the start of the second it falls in.
func (g *generator) runClosed(ctx context.Context, wg *sync.WaitGroup) {
	sc := g.cfg.Scenario
	var mu sync.Mutex
	next := 0
	for u := range sc.Users {
		wg.Go(func() {
			at := g.start.Add(time.Duration(u%5) * g.unit)
			for at.Before(g.end) {
				if g.clock.SleepUntil(ctx, at) != nil {
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				req, ok := g.admit(i, at)
				var done time.Time
				if ok {
					g.send(ctx, req)
					g.mu.Lock()
					done = req.replied
					if req.reply == ReplyGaveUp {
						done = req.deadline
					}
					g.mu.Unlock()
				} else {
					done = at
				}
				if ctx.Err() != nil {
					return
				}
				at = done.Add(time.Duration(sc.Think) * g.unit)
				if g.cfg.Arrivals == ArrivalsStep {
					at = g.start.Add(at.Sub(g.start).Truncate(g.unit))
				}
			}
		})
	}
}

// admit decides whether an arrival is sent (and records its lag) or
// dropped because the in-flight cap is reached.
func (g *generator) admit(i int, sched time.Time) (*request, bool) {
	lag := g.clock.Now().Sub(sched)
	g.metrics.scheduled.Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cfg.MaxInFlight > 0 && g.inFlight >= g.cfg.MaxInFlight {
		g.dropped = append(g.dropped, sched.Sub(g.start))
		g.metrics.dropped.Inc()
		return nil, false
	}
	g.inFlight++
	if lag > time.Duration(g.cfg.LateThreshold*float64(g.unit)) {
		g.late++
	}
	g.maxLag = max(g.maxLag, lag)
	g.metrics.sent.Inc()
	g.metrics.lag.Observe(lag.Seconds())
	req := &request{id: fmt.Sprintf("load-%06d", i), scheduled: sched, reply: ReplyPending,
		deadline: sched.Add(time.Duration(float64(g.cfg.Scenario.Timeout)*float64(g.unit) + g.cfg.TieWindow*float64(g.unit)))}
	g.reqs = append(g.reqs, req)
	return req, true
}

// body is what every load request carries: valid for both stations.
func body(id string) []byte {
	complete := true
	b, _ := json.Marshal(struct {
		api.EnrichRequest
		api.WriteRequest
	}{api.EnrichRequest{RecordID: id, Step: 1}, api.WriteRequest{ID: id, Complete: &complete}})
	return b
}

// send makes one request and records what the client saw of it.
func (g *generator) send(runCtx context.Context, req *request) {
	ctx, cancel := context.WithDeadline(runCtx, req.deadline)
	defer cancel()
	reply := ReplyError
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, g.cfg.Target, bytes.NewReader(body(req.id)))
	if err == nil {
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set(api.HeaderRequestID, req.id)
		g.mu.Lock()
		req.sent = g.clock.Now()
		g.mu.Unlock()
		var resp *http.Response
		resp, err = g.http.Do(hreq)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch {
			case api.Rejected(resp.StatusCode):
				reply = ReplyRejected
			case resp.StatusCode >= 200 && resp.StatusCode < 300:
				reply = ReplyOnTime
			}
		}
	}
	now := g.clock.Now()
	switch {
	case err != nil && runCtx.Err() != nil && now.Before(req.deadline):
		reply = ReplyPending // the run ended first
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		reply = ReplyGaveUp
	}
	g.mu.Lock()
	req.reply, req.replied = reply, now
	g.inFlight--
	g.replies[reply]++
	g.mu.Unlock()
	g.metrics.replies.WithLabelValues(string(reply)).Inc()
}
