// Package sendpool is an open-loop generator's senders: goroutines, each
// with a connection of its own, that send the arrivals a pacer gives them
// when they fall due. An arrival goes to the sender idle most recently
// (last in, first out), so that the load stays on the fewest, warmest
// connections and a pool that grew in a stall leaves its surplus idle;
// with no sender idle it waits in a backlog, which senders take from in
// order as they come free. Only the pacer grows the pool, and only when
// more senders would help: see Pool.Grow.
package sendpool

import (
	"context"
	"sync"
	"time"
)

// Config is what a pool needs of its generator. Open and Send are called
// from the senders' goroutines, Abandon and Due from the pacer's.
type Config[C, R any] struct {
	// Cap bounds the pool, and the arrivals in the backlog or with a
	// sender (Outstanding).
	Cap int
	// Late is the late threshold: an arrival this late is sent late or
	// not at all; Grow is how long the backlog's oldest arrival waits for
	// a busy sender to come free before the pool grows.
	Late, Grow time.Duration
	// MaxDials bounds the senders connecting at once.
	MaxDials int
	// Open opens a sender's connection (dialling it, so that a new sender
	// takes an arrival only once it can send it).
	Open func() C
	// Send sends (or counts) an arrival on a sender's connection.
	Send func(C, R)
	// Abandon counts an arrival still in the backlog when the pool closes.
	Abandon func(R)
	// Due is an arrival's scheduled time.
	Due func(R) time.Time
	// CPU reads the CPU time the process has used, the clock the pool
	// measures its load by (it grows only while there is CPU to spare);
	// nil: the process's own (getrusage). A test on a fake clock gives one
	// that keeps to that clock.
	CPU func() (time.Duration, bool)
}

// Pool is the senders. Its methods are the pacer's, one goroutine's; the
// senders share its state under its lock.
type Pool[C, R any] struct {
	cfg Config[C, R]
	wg  sync.WaitGroup

	mu      sync.Mutex
	idle    []*sender[R] // the most recently idle last
	backlog []queued[R]  // from head on, oldest first
	head    int
	// senders started; of them, starting have not yet connected.
	senders, starting int
	closed            bool

	// The pacer's own.
	cpu cpuGauge
	// The backlog's length when last sampled (at most every Grow), and
	// whether it was shorter than at the sample before.
	sampled   int
	sampledAt time.Time
	draining  bool
}

// sender is one goroutine of the pool; in carries its next arrival and is
// closed when the pool is.
type sender[R any] struct{ in chan R }

// queued is an arrival in the backlog and when it was put there.
type queued[R any] struct {
	r  R
	at time.Time
}

// New is an empty pool.
func New[C, R any](cfg Config[C, R]) *Pool[C, R] {
	p := &Pool[C, R]{cfg: cfg}
	p.cpu.read = cfg.CPU
	if p.cpu.read == nil {
		p.cpu.read = processCPU
	}
	return p
}

// Senders is how many senders the pool has started.
func (p *Pool[C, R]) Senders() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.senders
}

// Outstanding is the arrivals in the backlog or with a sender: those
// awaiting an outcome, for the generator's in-flight cap.
func (p *Pool[C, R]) Outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.backlog) - p.head + p.senders - len(p.idle) - p.starting
}

// Waiting is how many arrivals the backlog holds.
func (p *Pool[C, R]) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.backlog) - p.head
}

// Queue gives a due arrival to the sender idle most recently or, with none
// idle, puts it in the backlog at now.
func (p *Pool[C, R]) Queue(r R, now time.Time) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		s.in <- r // buffered, and empty while the sender was idle
		return
	}
	p.backlog = append(p.backlog, queued[R]{r, now})
	p.mu.Unlock()
}

// next is a sender's next arrival: the backlog's oldest, or, with none
// waiting, the next one handed to it once idle; false once the pool is
// closed.
func (p *Pool[C, R]) next(s *sender[R], first bool) (R, bool) {
	p.mu.Lock()
	if first {
		p.starting--
	}
	if p.closed {
		p.mu.Unlock()
		var none R
		return none, false
	}
	if p.head < len(p.backlog) {
		q := p.backlog[p.head]
		p.backlog[p.head] = queued[R]{}
		p.head++
		if p.head == len(p.backlog) {
			p.backlog, p.head = p.backlog[:0], 0
		}
		p.mu.Unlock()
		return q.r, true
	}
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	r, ok := <-s.in
	return r, ok
}

// GrowthDue is when the pacer should next call Grow, if the pool is short
// of senders (the backlog waits for more than are starting): when the
// backlog's oldest arrival will have waited Grow, or, when it has already,
// Grow from now.
func (p *Pool[C, R]) GrowthDue(now time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.backlog)-p.head <= p.starting {
		return time.Time{}, false
	}
	at := p.backlog[p.head].at.Add(p.cfg.Grow)
	if !at.After(now) {
		at = now.Add(p.cfg.Grow)
	}
	return at, true
}

// Grow starts senders for the arrivals in the backlog that no sender
// starting will take (at once when the pool is empty), once the oldest has
// waited Grow: a busy sender that comes free within it sends the arrival
// sooner than a new connection would. But not while the backlog is
// getting shorter (the senders are catching up, as after a pause of the
// process), not for arrivals that goroutines ready to run may take
// (senders whose reply has come, not yet run), and not when the process
// has been using nearly all its CPU: then the generator is short of CPU,
// not of senders, and more would only share it further and see their
// replies later still (the runtime polls the network when it has nothing
// else to run). The pool grows by at most MaxDials connecting at once and
// an eighth of its size per window of the CPU gauge; when the oldest
// arrival is already half the late threshold past its time, by MaxDials
// at once whatever is ready to run. With CPU to spare (under half of it
// used, by the gauge's moving average since the run started), a quarter
// of the late threshold is enough, even while the backlog is getting
// shorter: a burst of arrivals at a slow endpoint (step arrivals) needs
// its senders within the late threshold, and an eighth of the pool per
// window would take several windows.
func (p *Pool[C, R]) Grow(now time.Time) {
	p.mu.Lock()
	senders, starting, waiting := p.senders, p.starting, len(p.backlog)-p.head
	var oldest, due time.Time // when the oldest was queued, and due
	if waiting > 0 {
		oldest, due = p.backlog[p.head].at, p.cfg.Due(p.backlog[p.head].r)
	}
	p.mu.Unlock()
	more := waiting - starting
	if more <= 0 {
		return
	}
	if senders > 0 {
		if now.Sub(oldest) < p.cfg.Grow {
			return
		}
		catchingUp := p.catchingUp(now, waiting)
		if p.cpu.busy(now) {
			return
		}
		// With CPU to spare, an arrival a quarter of the late threshold
		// past its time is urgent, and the pool grows even while the
		// backlog shrinks; otherwise half, and not while it shrinks.
		spare, late := p.cpu.spare(), now.Sub(due)
		urgent := late >= p.cfg.Late/2 || spare && late >= p.cfg.Late/4
		if catchingUp && !(urgent && spare) {
			return
		}
		if !urgent {
			more -= runnable()
		}
		more = min(more, p.cpu.allowance(senders, urgent, p.cfg.MaxDials))
	}
	p.start(min(more, p.cfg.Cap-senders, p.cfg.MaxDials-starting), nil)
}

// catchingUp reports whether the backlog, waiting long now, is getting
// shorter: the senders are taking arrivals faster than they come.
func (p *Pool[C, R]) catchingUp(now time.Time, waiting int) bool {
	if now.Sub(p.sampledAt) >= p.cfg.Grow {
		p.draining = waiting < p.sampled
		p.sampled, p.sampledAt = waiting, now
	}
	return p.draining
}

// WarmLead is how long before the run's start Warm connects its senders
// at the earliest. A server closes a connection on which no request comes
// within its header timeout (the mock service's 5 s; 60 s is nginx's
// default), and the first request written on a connection it closed
// fails: senders warmed at a start far ahead (a segment's --start-at)
// lost each generator's first request so.
const WarmLead = time.Second

// Warm starts n senders before the run and waits until they have
// connected or start comes, whichever is first: a pool that starts empty
// at a high rate meets its first arrivals with dials, which on a busy core
// took milliseconds while the backlog grew. With start more than WarmLead
// away, it first waits until WarmLead before it.
func (p *Pool[C, R]) Warm(ctx context.Context, n int, start time.Time) {
	if wait := time.Until(start) - WarmLead; wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	ready := make(chan struct{}, n)
	p.start(n, ready)
	p.cpu.granted = 0
	defer p.cpu.begin(start) // the gauge's first window: from the run's start
	timer := time.NewTimer(time.Until(start))
	defer timer.Stop()
	for range n {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// start adds n senders (none when n ≤ 0); each says on ready, if given,
// when it has connected.
func (p *Pool[C, R]) start(n int, ready chan<- struct{}) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.senders += n
	p.starting += n
	p.mu.Unlock()
	p.cpu.granted += n
	for range n {
		p.wg.Go(func() { p.run(ready) })
	}
}

// run is one sender: it connects (and says so on ready, if any), then
// sends what it is given or takes from the backlog until the pool closes.
func (p *Pool[C, R]) run(ready chan<- struct{}) {
	s := &sender[R]{in: make(chan R, 1)}
	c := p.cfg.Open()
	if ready != nil {
		ready <- struct{}{}
	}
	for r, ok := p.next(s, true); ok; r, ok = p.next(s, false) {
		p.cfg.Send(c, r)
	}
}

// Close ends the pool and waits for every sender: the arrivals left in the
// backlog are abandoned.
func (p *Pool[C, R]) Close() {
	p.mu.Lock()
	p.closed = true
	left := p.backlog[p.head:]
	p.backlog, p.head = nil, 0
	for _, s := range p.idle {
		close(s.in)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, q := range left {
		p.cfg.Abandon(q.r)
	}
	p.wg.Wait()
}
