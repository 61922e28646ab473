package loadgen

import (
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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
	client  client
	metrics *metrics
	// inFlightCap bounds requests awaiting an outcome (Config.MaxInFlight,
	// or the default derived from the rate and the timeout).
	inFlightCap int
	senders     int // in the open generator's pool

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
	joinable []request     // gave up or pending: for the join, at most MaxJoined
	overflow map[Reply]int // gave up or pending beyond MaxJoined: not joined
	// Latency of on-time replies from the scheduled time (what users feel,
	// free of coordinated omission) and from the moment the request was
	// written (what the server and the network did); real microseconds.
	fromSchedule, fromSend *hdrhistogram.Histogram
}

func newGenerator(cfg Config, clock Clock) *generator {
	if cfg.LateThreshold == 0 {
		cfg.LateThreshold = DefaultLateThreshold
	}
	unit := time.Duration(float64(time.Second) * cfg.TimeScale)
	return &generator{cfg: cfg, clock: clock, unit: unit, metrics: newMetrics(cfg.Registerer), inFlightCap: cfg.inFlightCap(),
		replies: map[Reply]int{}, statuses: map[int]int{}, overflow: map[Reply]int{}, timeline: make([]Second, cfg.Duration),
		fromSchedule: NewLatencyHistogram(), fromSend: NewLatencyHistogram()}
}

// second is the model second of the run that t falls in, clamped to the run.
func (g *generator) second(t time.Time) int {
	return min(max(int(t.Sub(g.start)/g.unit), 0), len(g.timeline)-1)
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

// newRequest is arrival hit, due at sched, with its id and deadline.
func (g *generator) newRequest(hit int, sched time.Time) *request {
	return &request{id: requestID(hit), scheduled: sched, reply: ReplyPending,
		deadline: sched.Add(time.Duration(float64(g.cfg.Timeout)*float64(g.unit) + g.cfg.TieWindow*float64(g.unit)))}
}

// requestID is "load-" and hit, zero-padded to six digits.
func requestID(hit int) string {
	var b [24]byte
	out := append(b[:0], "load-"...)
	digits := strconv.AppendInt(b[12:12], int64(hit), 10)
	for range 6 - len(digits) {
		out = append(out, '0')
	}
	return string(append(out, digits...))
}

// admitted counts an arrival that a sender has taken.
func (g *generator) admitted(req *request) {
	g.metrics.scheduled.Inc()
	g.metrics.sent.Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight++
	g.sent++
	g.timeline[g.second(req.scheduled)].Arrivals++
}

// dropOne counts an arrival dropped because the in-flight cap was reached.
func (g *generator) dropOne(sched time.Time) {
	g.metrics.scheduled.Inc()
	g.metrics.dropped.Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropped++
	g.timeline[g.second(sched)].Dropped++
}

// admitCapped admits a closed user's request, or drops it when the
// in-flight cap is reached.
func (g *generator) admitCapped(req *request) bool {
	g.mu.Lock()
	full := g.inFlight >= g.inFlightCap
	g.mu.Unlock()
	if full {
		g.dropOne(req.scheduled)
		return false
	}
	g.admitted(req)
	return true
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
			g.overflow[reply]++
		}
	}
	g.metrics.replies[reply].Inc()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
