package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/mockservice/api"
)

// request is the generator's record of one request the client gave up on,
// or that was pending when the run ended: what the join with the server's
// log needs. Requests whose reply settles their outcome keep no record.
type request struct {
	id        string
	scheduled time.Time
	reply     Reply
	replied   time.Time
	deadline  time.Time
}

// generator is one run in progress. Its methods are safe for concurrent use.
type generator struct {
	cfg     Config
	clock   Clock
	unit    time.Duration
	start   time.Time
	end     time.Time
	http    *http.Client
	metrics *metrics
	body    func(id string) []byte

	mu       sync.Mutex
	sent     int
	inFlight int
	dropped  int
	behind   int // due, and not sent before the run ended
	late     int
	maxLag   time.Duration
	replies  map[Reply]int
	statuses map[int]int
	timeline []Second
	joinable []request // gave up or pending: for the join, at most MaxJoined
	overflow int       // gave up or pending beyond MaxJoined: unjoined
	// Latency of on-time replies from the scheduled time (what users feel,
	// free of coordinated omission) and from the moment the request was
	// written (what the server and the network did); real microseconds.
	fromSchedule, fromSend *hdrhistogram.Histogram
}

func newGenerator(cfg Config, clock Clock) *generator {
	unit := time.Duration(float64(time.Second) * cfg.TimeScale)
	return &generator{cfg: cfg, clock: clock, unit: unit, metrics: newMetrics(cfg.Registerer), body: body,
		replies: map[Reply]int{}, statuses: map[int]int{}, timeline: make([]Second, cfg.Scenario.Duration),
		fromSchedule: newLatencyHistogram(), fromSend: newLatencyHistogram()}
}

// second is the model second of the run that t falls in, clamped to the run.
func (g *generator) second(t time.Time) int {
	return min(max(int(t.Sub(g.start)/g.unit), 0), len(g.timeline)-1)
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
			// The run ended first. Arrivals already due were not sent for
			// want of time, not for want of a schedule: they are behind,
			// and counted.
			stopped := g.clock.Now()
			if stopped.After(g.end) {
				stopped = g.end
			}
			for ok && sched.Before(stopped) {
				g.behindOne(sched)
				hit++
				off, ok = p.Due(hit)
				sched = g.start.Add(off)
			}
			return
		}
		if req, ok := g.admit(hit, sched); ok {
			wg.Go(func() { g.send(ctx, req) })
		}
	}
}

// behindOne counts an arrival that fell due and could not be sent before
// the run ended.
func (g *generator) behindOne(sched time.Time) {
	g.metrics.scheduled.Inc()
	g.metrics.behind.Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.behind++
	g.timeline[g.second(sched)].Behind++
}

// runClosed runs the virtual users: user i first sends at second i mod 5,
// then waits for its outcome and thinks before sending again. In step mode
// the next send is at the start of the second it falls in. After a
// rejection or a drop a user waits at least one model second (one step of
// the model), so that a think time of 0 cannot spin.
func (g *generator) runClosed(ctx context.Context, wg *sync.WaitGroup) {
	sc := g.cfg.Scenario
	think := time.Duration(sc.Think) * g.unit
	var next atomic.Int64
	for u := range sc.Users {
		wg.Go(func() {
			at := g.start.Add(time.Duration(u%5) * g.unit)
			for at.Before(g.end) {
				if g.clock.SleepUntil(ctx, at) != nil {
					return
				}
				req, ok := g.admit(int(next.Add(1)-1), at)
				done := at.Add(g.unit) // dropped: the next step
				if ok {
					reply, replied := g.send(ctx, req)
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

// admit decides whether an arrival is sent or dropped because the
// in-flight cap is reached; both are counted in the arrival's second.
func (g *generator) admit(i int, sched time.Time) (*request, bool) {
	g.metrics.scheduled.Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cfg.MaxInFlight > 0 && g.inFlight >= g.cfg.MaxInFlight {
		g.dropped++
		g.timeline[g.second(sched)].Dropped++
		g.metrics.dropped.Inc()
		return nil, false
	}
	g.inFlight++
	g.sent++
	g.timeline[g.second(sched)].Arrivals++
	g.metrics.sent.Inc()
	return &request{id: fmt.Sprintf("load-%06d", i), scheduled: sched, reply: ReplyPending,
		deadline: sched.Add(time.Duration(float64(g.cfg.Scenario.Timeout)*float64(g.unit) + g.cfg.TieWindow*float64(g.unit)))}, true
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

// send makes one request and records what the client saw of it. The send
// lag (late start) is taken when the request has been written.
func (g *generator) send(runCtx context.Context, req *request) (Reply, time.Time) {
	ctx, cancel := context.WithDeadline(runCtx, req.deadline)
	defer cancel()
	var wrote atomic.Int64 // unix nanoseconds, by the clock
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(g.clock.Now().UnixNano()) },
	})
	reply, status := ReplyTransport, 0
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, g.cfg.Target, bytes.NewReader(g.body(req.id)))
	if err == nil {
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set(api.HeaderRequestID, req.id)
		var resp *http.Response
		resp, err = g.http.Do(hreq)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
			switch {
			case api.Rejected(status):
				reply = ReplyRejected
			case status >= 200 && status < 300:
				reply = ReplyOnTime
			default:
				reply = ReplyStatus
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
	var sentAt time.Time
	if ns := wrote.Load(); ns != 0 {
		sentAt = time.Unix(0, ns)
	}
	g.settle(req, reply, status, sentAt, now)
	return reply, now
}

// settle counts a request's reply. A reply that settles the outcome is
// counted at once; a request the client gave up on, or still pending, is
// kept for the join with the server's log.
func (g *generator) settle(req *request, reply Reply, status int, sentAt, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	g.replies[reply]++
	if !sentAt.IsZero() {
		lag := sentAt.Sub(req.scheduled)
		if lag > time.Duration(g.cfg.LateThreshold*float64(g.unit)) {
			g.late++
		}
		g.maxLag = max(g.maxLag, lag)
		g.metrics.lag.Observe(lag.Seconds())
	}
	sec := &g.timeline[g.second(now)]
	switch reply {
	case ReplyOnTime:
		sec.OnTime++
		record(g.fromSchedule, now.Sub(req.scheduled))
		if !sentAt.IsZero() {
			record(g.fromSend, now.Sub(sentAt))
		}
	case ReplyRejected:
		sec.Rejected++
	case ReplyStatus:
		g.statuses[status]++
	case ReplyGaveUp, ReplyPending:
		if reply == ReplyGaveUp {
			g.timeline[g.second(req.deadline)].GaveUp++
		}
		if len(g.joinable) < MaxJoined {
			req.reply, req.replied = reply, now
			g.joinable = append(g.joinable, *req)
		} else {
			g.overflow++
		}
	}
	g.metrics.replies.WithLabelValues(string(reply)).Inc()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
