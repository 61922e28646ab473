package sendpool

import (
	"context"
	"sync"
	"testing"
	"time"
)

// conn is a test connection: its number, in the order opened.
type conn int

// recorder is a pool's generator for the tests: it counts connections,
// records which connection sent each arrival, and can hold the senders.
type recorder struct {
	mu        sync.Mutex
	opened    int
	sentOn    map[int]conn
	order     []int
	abandoned []int
	hold      chan struct{} // when set, each send waits for a receive
}

func newPool(r *recorder, capacity int) *Pool[conn, int] {
	return New(Config[conn, int]{Cap: capacity, Late: time.Second, Grow: time.Millisecond, MaxDials: 32,
		Open: func() conn {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.opened++
			return conn(r.opened)
		},
		Send: func(c conn, a int) {
			if r.hold != nil {
				<-r.hold
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.sentOn[a] = c
			r.order = append(r.order, a)
		},
		Abandon: func(a int) { r.mu.Lock(); defer r.mu.Unlock(); r.abandoned = append(r.abandoned, a) },
		Due:     func(int) time.Time { return time.Now() },
	})
}

// waitIdle waits until n senders are idle.
func waitIdle(t *testing.T, p *Pool[conn, int], n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		if idle == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d senders idle, want %d", idle, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Arrivals go to the sender idle most recently: one after another, they
// all go out on the same connection, the other warm senders left idle.
func TestTheMostRecentlyIdleSenderSends(t *testing.T) {
	r := &recorder{sentOn: map[int]conn{}}
	p := newPool(r, 10)
	p.Warm(context.Background(), 4, time.Now().Add(WarmLead/2))
	waitIdle(t, p, 4)
	for a := range 20 {
		p.Queue(a, time.Now())
		waitIdle(t, p, 4)
	}
	p.Close()
	first := r.sentOn[0]
	for a := range 20 {
		if r.sentOn[a] != first {
			t.Fatalf("arrival %d went out on connection %d, arrival 0 on %d: want one connection for arrivals one at a time", a, r.sentOn[a], first)
		}
	}
	if r.opened != 4 || p.Senders() != 4 {
		t.Errorf("%d connections opened by %d senders; want the 4 warm ones", r.opened, p.Senders())
	}
}

// Senders warmed for a start far ahead connect no earlier than WarmLead
// before it: a connection idle from its dial to its first request longer
// than the server's header timeout is closed under it.
func TestWarmConnectsShortlyBeforeTheStart(t *testing.T) {
	var mu sync.Mutex
	var opened []time.Time
	p := New(Config[conn, int]{Cap: 4, Late: time.Second, Grow: time.Millisecond, MaxDials: 32,
		Open:    func() conn { mu.Lock(); defer mu.Unlock(); opened = append(opened, time.Now()); return 0 },
		Send:    func(conn, int) {},
		Abandon: func(int) {},
		Due:     func(int) time.Time { return time.Now() },
	})
	start := time.Now().Add(WarmLead + 500*time.Millisecond)
	p.Warm(context.Background(), 2, start)
	waitIdle(t, p, 2)
	p.Close()
	for _, at := range opened {
		if lead := start.Sub(at); lead > WarmLead {
			t.Errorf("a sender connected %v before the start; want at most %v", lead, WarmLead)
		}
	}
	// Cancelled while it waits, it connects nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := New(Config[conn, int]{Cap: 4, Late: time.Second, Grow: time.Millisecond, MaxDials: 32,
		Open:    func() conn { t.Error("a sender connected after the cancellation"); return 0 },
		Send:    func(conn, int) {},
		Abandon: func(int) {},
		Due:     func(int) time.Time { return time.Now() },
	})
	q.Warm(ctx, 2, time.Now().Add(time.Minute))
	q.Close()
}

// With every sender busy an arrival waits in the backlog, in order; the
// pool grows for it only once it has waited Grow; what is left in the
// backlog at Close is abandoned, and counted once.
func TestBacklogGrowthAndClose(t *testing.T) {
	r := &recorder{sentOn: map[int]conn{}, hold: make(chan struct{})}
	p := newPool(r, 10)
	p.Warm(context.Background(), 1, time.Now().Add(5*time.Second))
	waitIdle(t, p, 1)
	now := time.Now()
	p.Queue(0, now) // to the one sender, which holds it
	p.Queue(1, now) // to the backlog
	p.Queue(2, now)
	if w, o := p.Waiting(), p.Outstanding(); w != 2 || o != 3 {
		t.Fatalf("waiting %d, outstanding %d; want 2 and 3", w, o)
	}
	at, short := p.GrowthDue(now)
	if !short || !at.Equal(now.Add(time.Millisecond)) {
		t.Fatalf("growth due %v (short %v); want at %v", at, short, now.Add(time.Millisecond))
	}
	p.Grow(now.Add(time.Microsecond)) // too soon
	if p.Senders() != 1 {
		t.Fatalf("%d senders after a wait shorter than Grow; want 1", p.Senders())
	}
	p.Grow(now.Add(2 * time.Millisecond))
	if s := p.Senders(); s < 2 || s > 3 {
		t.Fatalf("%d senders after the backlog waited; want 2 or 3 (one per waiting arrival, fewer if goroutines were ready to run)", s)
	}
	p.Queue(3, time.Now())
	close(r.hold) // let every send finish
	deadline := time.Now().Add(5 * time.Second)
	for p.Waiting() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	if len(r.order)+len(r.abandoned) != 4 {
		t.Errorf("sent %v, abandoned %v; want each of 4 arrivals once", r.order, r.abandoned)
	}
}

// A closed pool abandons what its backlog holds, and its senders end.
func TestCloseAbandonsTheBacklog(t *testing.T) {
	r := &recorder{sentOn: map[int]conn{}, hold: make(chan struct{})}
	p := newPool(r, 10)
	p.Warm(context.Background(), 1, time.Now().Add(5*time.Second))
	waitIdle(t, p, 1)
	for a := range 3 {
		p.Queue(a, time.Now())
	}
	go func() { // once the pool is closed, the busy sender finishes arrival 0
		for {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				r.hold <- struct{}{}
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	p.Close()
	if len(r.order) != 1 || len(r.abandoned) != 2 || r.abandoned[0] != 1 || r.abandoned[1] != 2 {
		t.Errorf("sent %v, abandoned %v; want 0 sent, 1 and 2 abandoned in order", r.order, r.abandoned)
	}
}
