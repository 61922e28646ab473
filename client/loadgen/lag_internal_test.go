package loadgen

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/loadlab/loadlab/client/transport"
)

// slowStart delays every request before it reaches the wire, like a sender
// that is slow to get going (a busy core, a slow connection set-up).
type slowStart struct{ next http.RoundTripper }

func (s slowStart) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(200 * time.Millisecond)
	return s.next.RoundTrip(r)
}

// Send lag is measured when the request has been written, not when it was
// admitted: a request admitted on time but written 200 ms late is a late
// start.
func TestSendLagIsTakenAtTheWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	sc := OpeningSchedule()
	g := newGenerator(Config{Target: srv.URL, Schedule: sc, Arrivals: ArrivalsStep, TimeScale: 1, LateThreshold: 0.1}, RealClock)
	u, _ := url.Parse(srv.URL)
	n := newNetHTTP(u, 1, RealClock, nil)
	n.client = &http.Client{Transport: slowStart{transport.New(1).Transport}}
	g.client = n
	g.start = time.Now()
	req := g.newRequest(0, g.start)
	g.admitted(req)
	if reply, _ := g.send(context.Background(), n, req); reply != ReplyOnTime {
		t.Fatalf("reply %s", reply)
	}
	if g.late != 1 || g.maxLag < 200*time.Millisecond {
		t.Errorf("net/http: late %d, max lag %v; want one late start of ≥ 200 ms", g.late, g.maxLag)
	}

	// fasthttp: its connection notes when it wrote; a dial that takes
	// 200 ms writes the request 200 ms late.
	g = newGenerator(Config{Target: srv.URL, Schedule: sc, Arrivals: ArrivalsStep, TimeScale: 1, LateThreshold: 0.1}, RealClock)
	f := newFastHTTP(u, RealClock)
	g.client = f
	c := f.newConn().(*fastConn)
	dial := c.hc.Dial
	c.hc.Dial = func(addr string) (net.Conn, error) { time.Sleep(200 * time.Millisecond); return dial(addr) }
	g.start = time.Now()
	req = g.newRequest(1, g.start)
	g.admitted(req)
	if reply, _ := g.send(context.Background(), c, req); reply != ReplyOnTime {
		t.Fatalf("fasthttp reply %s", reply)
	}
	if g.late != 1 || g.maxLag < 200*time.Millisecond {
		t.Errorf("fasthttp: late %d, max lag %v; want one late start of ≥ 200 ms", g.late, g.maxLag)
	}
	// And a request on the open connection is written at once.
	g.start = time.Now()
	req = g.newRequest(2, g.start)
	g.admitted(req)
	g.send(context.Background(), c, req)
	if g.late != 1 || g.maxLag > time.Second {
		t.Errorf("fasthttp: late %d after a prompt request", g.late)
	}
}

// cutAtRunEnd answers every request as fasthttp does when the run's
// deadline comes first: with its timeout error, at that deadline, before
// the run's context has been marked done.
type cutAtRunEnd struct{ runEnd time.Time }

func (c cutAtRunEnd) do(context.Context, time.Time, string) (int, time.Time, error) {
	time.Sleep(time.Until(c.runEnd))
	return 0, time.Now(), fasthttp.ErrTimeout
}

func (cutAtRunEnd) gaveUp(err error) bool { return errors.Is(err, fasthttp.ErrTimeout) }

// A request cut short by the end of the run is pending (unfinished), not
// given up on, even when the client returns before the run's context is
// done; one whose own deadline passed first was given up on.
func TestRequestCutByTheRunsEndIsPending(t *testing.T) {
	sc := OpeningSchedule()
	g := newGenerator(Config{Target: "http://127.0.0.1:1", Schedule: sc, Arrivals: ArrivalsStep, TimeScale: 1, LateThreshold: 0.1}, RealClock)
	g.start = time.Now()
	runEnd := g.start.Add(50 * time.Millisecond)
	// A context whose deadline is the run's end but that is never done
	// before send returns: the race at its sharpest.
	ctx := deadlineOnly{Context: context.Background(), d: runEnd}
	req := g.newRequest(0, g.start) // its own deadline: the scenario's timeout, seconds away
	g.admitted(req)
	if reply, _ := g.send(ctx, cutAtRunEnd{runEnd}, req); reply != ReplyPending {
		t.Errorf("cut at the run's end: %s, want %s", reply, ReplyPending)
	}
	req = g.newRequest(1, g.start)
	req.deadline = g.start.Add(10 * time.Millisecond) // its own deadline first
	g.admitted(req)
	if reply, _ := g.send(context.Background(), cutAtRunEnd{req.deadline}, req); reply != ReplyGaveUp {
		t.Errorf("cut at its own deadline: %s, want %s", reply, ReplyGaveUp)
	}
}

// deadlineOnly has a deadline but is never done.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }
