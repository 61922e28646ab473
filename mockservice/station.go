package mockservice

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Result describes one request's passage through a station.
type Result struct {
	Outcome api.Outcome
	// QueueWait is the time from arrival to a worker (or to giving up).
	QueueWait time.Duration
	// Planned is the sampled service time after the time scale; Service is
	// the time the worker was actually held.
	Planned, Service time.Duration
	// RejectStatus is the status a refusal answers with (the station's at
	// the moment it refused).
	RejectStatus int
}

// Station is a fixed pool of workers behind a bounded FIFO queue. It is safe
// for concurrent use. Service times are drawn, in the order services start,
// from a seeded generator, and multiplied by the time scale.
//
// A worker serves back to back: a queued request handed a worker starts at
// the moment its predecessor was planned to finish, not when the
// predecessor's timer happened to fire, so timer slack does not accumulate
// along a busy worker's chain of requests; but never before the request
// arrived (one that arrived during the predecessor's timer slack starts at
// its arrival). A queue wait is therefore never negative; a station that
// computes one has lost track of time and panics with a message.
type Station struct {
	name  string
	cfg   config.Station
	scale float64
	seed  uint32
	// observers, when set, observe every served or dropped request's queue
	// wait and service time (the service's histograms; replaced on reset).
	observers atomic.Pointer[observers]
	log       *RequestLog
	leaveFn   func() // leave, bound once: Open returns it without allocating

	mu        sync.Mutex
	dist      latency.Distribution
	src       *latency.Mulberry32
	busy      int
	ends      []time.Time // planned ends of the services in progress
	queue     list.List   // of *waiter, front is next
	offered   int
	hwm       api.HighWater
	requests  map[api.Outcome]float64
	wastedSec float64
	// draws and plannedLab: how many service times were drawn since the
	// last reset, and their sum in lab seconds (before the time scale): the
	// seeded draws themselves, free of timer noise.
	draws      int
	plannedLab float64
	// slowdown multiplies a draw by the factor for the services in
	// progress (SetSlowdown); empty: none.
	slowdown []float64
}

type observers struct{ wait, service prometheus.Observer }

type waiter struct {
	arrived time.Time // when its request reached the station
	ready   chan struct{}
	granted bool      // set under Station.mu before ready is closed
	start   time.Time // when its service starts (set with granted)
	planned time.Duration
	replay  time.Duration // the service time to replay (lab time), or < 0: draw
}

// NewStation returns a station named name (used as the metric label) with
// the given shape and service-time distribution. seed seeds its generator;
// scale multiplies every sampled service time (1 is real time).
func NewStation(name string, cfg config.Station, dist latency.Distribution, seed uint32, scale float64) (*Station, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mockservice: station %s: %w", name, err)
	}
	if !(scale > 0) {
		return nil, fmt.Errorf("mockservice: station %s: time scale %v must be > 0", name, scale)
	}
	s := &Station{name: name, cfg: cfg, scale: scale, seed: seed, dist: dist,
		src: latency.NewMulberry32(seed), requests: map[api.Outcome]float64{}}
	s.leaveFn = s.leave
	return s, nil
}

// Name returns the station's name.
func (s *Station) Name() string { return s.name }

// SetRequestLog makes the station record every request that carries an id
// in l (nil: none). Call it before the first request.
func (s *Station) SetRequestLog(l *RequestLog) { s.log = l }

// SetDistribution switches the service-time distribution for requests that
// start service from now on.
func (s *Station) SetDistribution(d latency.Distribution) {
	s.mu.Lock()
	s.dist = d
	s.mu.Unlock()
}

// Open records that one more request is open at the station and returns the
// function that records it has left. Call it for every request once its
// body is complete and valid, before Do, so that refusals count as offered
// concurrency. A request still sending its body (which holds no worker, for
// as long as the server's read timeout allows) or refused for bad input is
// not offered: offered concurrency is what the clients asked of the
// station's workers.
func (s *Station) Open() (leave func()) {
	s.mu.Lock()
	s.offered++
	s.hwm.Offered = max(s.hwm.Offered, s.offered)
	s.mu.Unlock()
	return s.leaveFn
}

func (s *Station) leave() {
	s.mu.Lock()
	s.offered--
	s.mu.Unlock()
}

// startLocked takes a worker for a service starting at start and samples
// its service time (times the slowdown's factor for the services now in
// progress, itself included), or takes replay (lab time) when it is ≥ 0.
// s.mu must be held.
func (s *Station) startLocked(start time.Time, replay time.Duration) time.Duration {
	s.busy++
	s.hwm.Busy = max(s.hwm.Busy, s.busy)
	draw := replay
	if replay < 0 {
		draw = s.dist.Sample(s.src)
		if len(s.slowdown) > 0 {
			draw = time.Duration(float64(draw) * s.slowdown[min(s.busy, len(s.slowdown))-1])
		}
	}
	s.draws++
	s.plannedLab += draw.Seconds()
	planned := time.Duration(float64(draw) * s.scale)
	if s.cfg.TieWindow > 0 { // planned ends matter only to the tie window
		s.ends = append(s.ends, start.Add(planned))
	}
	return planned
}

// Do admits one request: it is served at once if a worker is free, queued if
// the queue has room, refused otherwise. It blocks until the work is done
// (or dropped). ctx is the client's: its end marks the client as gone, which
// cancels the work only with CancelOnDisconnect. id, when not empty, names
// the request in the station's request log.
func (s *Station) Do(ctx context.Context, id string) Result { return s.DoFor(ctx, id, -1, nil) }

// DoFor is Do with the service time given: replay, in lab time (before the
// time scale), instead of a draw; a negative replay draws as Do does. It
// replays a recorded workload (loadlab simulate concurrency --real).
// admitted, when not nil, is called once the request has a worker, a place
// in the queue or its refusal, before it waits.
func (s *Station) DoFor(ctx context.Context, id string, replay time.Duration, admitted func()) Result {
	if admitted == nil {
		admitted = func() {}
	}
	arrived := time.Now()
	entry := s.log.add(id, s.name, arrived)
	start, planned, refused, ok := s.admit(ctx, entry, arrived, replay, admitted)
	if !ok {
		return refused
	}
	return s.serveAdmitted(ctx, entry, arrived, start, planned)
}

// admit gives a request arriving at arrived a worker, at once or after
// its turn in the queue, and returns when its service starts and how long
// it is planned to take; or, with ok false, the Result of a request
// refused (the station full) or cancelled in the queue, already counted
// and logged. admitted is called as DoFor says.
func (s *Station) admit(ctx context.Context, entry *api.RequestEntry, arrived time.Time, replay time.Duration, admitted func()) (
	start time.Time, planned time.Duration, res Result, ok bool) {
	for {
		s.mu.Lock()
		switch {
		case s.busy < s.cfg.Workers:
			start = time.Now()
			planned = s.startLocked(start, replay)
			s.mu.Unlock()
			admitted()
			return start, planned, Result{}, true
		case s.cfg.Queue == config.UnboundedQueue || s.queue.Len() < s.cfg.Queue:
			w := &waiter{arrived: arrived, ready: make(chan struct{}), replay: replay}
			el := s.queue.PushBack(w)
			s.hwm.Queue = max(s.hwm.Queue, s.queue.Len())
			s.mu.Unlock()
			admitted()
			if !s.waitTurn(ctx, w, el) {
				wait := time.Since(arrived)
				s.finish(api.OutcomeCancelled, 0)
				s.log.end(entry, time.Time{}, time.Now(), api.OutcomeCancelled)
				return time.Time{}, 0, Result{Outcome: api.OutcomeCancelled, QueueWait: wait}, false
			}
			return w.start, w.planned, Result{}, true
		}
		// Full. A completion planned within the tie window counts as
		// happening before this arrival (the models' order for
		// simultaneous events): wait for it, then decide again.
		if due, ok := s.dueWithinTieLocked(arrived); ok {
			s.mu.Unlock()
			time.Sleep(max(time.Until(due), 100*time.Microsecond))
			continue
		}
		s.requests[api.OutcomeRejected]++
		status := s.cfg.RejectStatus
		s.mu.Unlock()
		admitted()
		s.log.end(entry, time.Time{}, time.Now(), api.OutcomeRejected)
		return time.Time{}, 0, Result{Outcome: api.OutcomeRejected, RejectStatus: status}, false
	}
}

// serveAdmitted serves a request that arrived at arrived and was given a
// worker from start for planned, then frees the worker (handing it to the
// queue's head), counts the outcome and observes the times.
func (s *Station) serveAdmitted(ctx context.Context, entry *api.RequestEntry, arrived, start time.Time, planned time.Duration) Result {
	wait := start.Sub(arrived)
	if wait < 0 {
		panic(fmt.Sprintf("mockservice: station %s started a request %v before it arrived", s.name, -wait))
	}
	s.log.started(entry, start)

	plannedEnd := start.Add(planned)
	cancelled := s.serve(ctx, plannedEnd)
	finished := time.Now()
	service := finished.Sub(start)
	handoff := plannedEnd
	if cancelled {
		handoff = finished
	}
	out := api.OutcomeServed
	switch {
	case cancelled:
		out = api.OutcomeCancelled
	case ctx.Err() != nil:
		out = api.OutcomeServedAfterClientLeft
	}
	wasted := time.Duration(0)
	if out != api.OutcomeServed {
		wasted = service
	}
	s.mu.Lock() // one lock for both: this runs on every request
	s.releaseLocked(plannedEnd, handoff)
	s.finishLocked(out, wasted)
	s.mu.Unlock()
	s.log.end(entry, start, finished, out)
	if o := s.observers.Load(); o != nil {
		o.wait.Observe(wait.Seconds())
		o.service.Observe(service.Seconds())
	}
	return Result{Outcome: out, QueueWait: wait, Planned: planned, Service: service}
}

// waitTurn blocks until w is handed a worker (true) or, with
// CancelOnDisconnect, the client leaves first (false; w is out of the queue).
func (s *Station) waitTurn(ctx context.Context, w *waiter, el *list.Element) bool {
	if !s.cfg.CancelOnDisconnect {
		<-w.ready
		return true
	}
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		// A worker was handed over as the client left: give it back.
		s.mu.Unlock()
		s.release(w.start.Add(w.planned), time.Now())
		return false
	}
	s.queue.Remove(el)
	s.mu.Unlock()
	return false
}

// release ends the service planned to end at plannedEnd and hands its worker
// to the head of the queue, or frees it. The head's service starts at
// handoff, or at its arrival if it arrived after handoff (during the
// predecessor's timer slack): never before it arrived.
func (s *Station) release(plannedEnd, handoff time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(plannedEnd, handoff)
}

// releaseLocked is release with s.mu held.
func (s *Station) releaseLocked(plannedEnd, handoff time.Time) {
	if s.cfg.TieWindow > 0 {
		if i := slices.IndexFunc(s.ends, plannedEnd.Equal); i >= 0 {
			s.ends = slices.Delete(s.ends, i, i+1)
		}
	}
	if s.busy == 0 {
		panic("mockservice: station " + s.name + " released more workers than it holds")
	}
	s.busy--
	if s.busy >= s.cfg.Workers {
		return // the station was shrunk (SetShape): this worker is gone
	}
	if front := s.queue.Front(); front != nil {
		w := s.queue.Remove(front).(*waiter)
		w.start = handoff
		if w.arrived.After(handoff) {
			w.start = w.arrived
		}
		w.planned = s.startLocked(w.start, w.replay)
		w.granted = true
		close(w.ready)
	}
}

func (s *Station) finish(out api.Outcome, wasted time.Duration) {
	s.mu.Lock()
	s.finishLocked(out, wasted)
	s.mu.Unlock()
}

// finishLocked counts a request's outcome and wasted worker time; s.mu
// must be held.
func (s *Station) finishLocked(out api.Outcome, wasted time.Duration) {
	s.requests[out]++
	s.wastedSec += wasted.Seconds()
}

// Stats returns a snapshot of the station.
func (s *Station) Stats() api.StationStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := make(map[api.Outcome]float64, len(api.Outcomes))
	for _, o := range api.Outcomes {
		req[o] = s.requests[o]
	}
	return api.StationStats{
		Workers: s.cfg.Workers, QueueCapacity: s.cfg.Queue,
		Busy: s.busy, QueueLength: s.queue.Len(), Offered: s.offered,
		HighWater: s.hwm, Requests: req, WastedSeconds: s.wastedSec,
		Draws: s.draws, PlannedLabSeconds: s.plannedLab,
	}
}

// Reset zeroes the counters, re-seeds the generator with seed, and sets
// every high-water mark to its current value. Requests in progress are
// unaffected and are counted when they end.
func (s *Station) Reset(seed uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = map[api.Outcome]float64{}
	s.wastedSec = 0
	s.draws, s.plannedLab = 0, 0
	s.seed = seed
	s.src = latency.NewMulberry32(seed)
	s.hwm = api.HighWater{Offered: s.offered, Busy: s.busy, Queue: s.queue.Len()}
}
