package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// The open generator sends through a pool of senders that grows only when
// every sender is busy: 400 arrivals against a fast endpoint take a handful
// of senders, not a goroutine each. The pool's logic is the subject: on a
// fake clock (net/http over the in-memory network, in a synctest bubble)
// the pacer is never stalled by the machine, so the bounds are the pool's
// own. The fasthttp client runs the same round on loopback, in real time,
// for what does not depend on the host: every arrival accounted for.
func TestSendersAreReused(t *testing.T) {
	sc := OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 200, 200
	synctest.Test(t, func(t *testing.T) {
		url, dial := mocktest.Serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		g := sendersRound(t, url+"/x", sc, ClientNetHTTP, dial)
		checkAccounted(t, g, ClientNetHTTP)
		onTime, pending := g.replies[ReplyOnTime], g.replies[ReplyPending]
		t.Logf("%s: %d senders for %d requests, %d behind, %d on time, %d pending", ClientNetHTTP, g.senders, g.sent, g.behind, onTime, pending)
		if pending > 2 || g.senders > 40 || g.behind != 0 {
			t.Errorf("%s: %d senders, %d pending, %d behind; want at most 40 senders, 2 pending, none behind", ClientNetHTTP, g.senders, pending, g.behind)
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	checkAccounted(t, sendersRound(t, srv.URL+"/x", sc, ClientFastHTTP, nil), ClientFastHTTP)
}

// checkAccounted fails unless each of the round's 400 arrivals was sent
// or behind, and each sent one answered on time or pending.
func checkAccounted(t *testing.T, g *generator, client HTTPClient) {
	t.Helper()
	onTime, pending := g.replies[ReplyOnTime], g.replies[ReplyPending]
	if g.sent+g.behind != 400 || onTime+pending != g.sent {
		t.Fatalf("%s: sent %d, behind %d, replies %v: want 400 arrivals, each sent or behind, each sent one answered on time or pending",
			client, g.sent, g.behind, g.replies)
	}
}

// idleCPU is a process that uses no CPU time: on a fake clock, which
// stands still while the process computes, its real CPU time would read
// as a machine always short of CPU.
func idleCPU() (time.Duration, bool) { return 0, true }

// sendersRound runs two seconds of the open schedule against target with
// client (net/http over dial, when given), and returns the generator with
// its counts.
func sendersRound(t *testing.T, target string, sc Schedule, client HTTPClient, dial transport.Dialer) *generator {
	t.Helper()
	cfg := Config{Target: target, Schedule: sc, Arrivals: ArrivalsUniform, TimeScale: 0.5, Client: client}
	if dial != nil {
		cfg.CPU = idleCPU
	}
	g := newGenerator(cfg, RealClock)
	u, _ := url.Parse(cfg.Target)
	if client == ClientFastHTTP {
		g.client = newFastHTTP(u, RealClock)
	} else {
		g.client = newNetHTTP(u, g.inFlightCap, RealClock, dial)
	}
	g.start = time.Now()
	g.end = g.start.Add(2 * g.unit)
	ctx, cancel := context.WithDeadline(context.Background(), g.end)
	g.runOpen(ctx, RampPacer{Schedule: sc, Mode: ArrivalsUniform, Unit: g.unit})
	cancel()
	g.client.close()
	return g
}

// The default in-flight cap is the most requests the schedule can have
// awaiting an outcome, bounded.
func TestDefaultInFlightCap(t *testing.T) {
	sc := OpeningSchedule() // peak 8/s, timeout 10 s
	for _, tt := range []struct {
		change func(*Config)
		want   int
	}{
		{func(*Config) {}, 8 * 11},
		{func(c *Config) { c.MaxInFlight = 5 }, 5},
		{func(c *Config) { c.BaseRate, c.PeakRate = 100_000, 100_000 }, DefaultMaxInFlight},
		{func(c *Config) { c.Mode, c.Users = Closed, 16 }, 16},
	} {
		c := Config{Schedule: sc}
		tt.change(&c)
		if got := c.inFlightCap(); got != tt.want {
			t.Errorf("%+v: cap %d, want %d", c.Schedule, got, tt.want)
		}
	}
}

// A pool whose senders all wait on a slow endpoint grows, so that every
// arrival still goes out on time: 200 arrivals a second at an endpoint
// that takes 100 ms need about 20 senders. On a fake clock (net/http over
// the in-memory network): a stall of the machine would put an arrival
// behind however the pool grew, which is not the pool's doing.
func TestPoolGrowsForASlowEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		url, dial := mocktest.Serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(100 * time.Millisecond) }))
		sc := OpeningSchedule()
		sc.Duration, sc.BaseRate, sc.PeakRate = 2, 100, 100
		g := sendersRound(t, url+"/x", sc, ClientNetHTTP, dial) // 0.5 s per model second: 200 arrivals a second
		if g.sent != 200 || g.behind != 0 || g.late != 0 || g.senders < 15 {
			t.Errorf("sent %d, behind %d, late %d with %d senders; want all 200 sent on time by at least 15 senders", g.sent, g.behind, g.late, g.senders)
		}
	})
}

// A generator that could not keep its schedule is saturated: over 1% of
// its arrivals behind, or over 1% of its requests started late; its rate
// is the requests it sent per real second.
func TestSaturationIsMeasured(t *testing.T) {
	r := Result{Scheduled: 1000, Requests: 900, Behind: 100, TimeScale: 0.5, Timeline: make([]Second, 4)}
	r.MeasureSending()
	if !r.Saturated || r.SentPerRealSecond != 450 {
		t.Fatalf("saturated %v at %v requests/s; want saturated at 450", r.Saturated, r.SentPerRealSecond)
	}
	r = Result{Scheduled: 1000, Requests: 995, Behind: 5, LateStarts: 9, TimeScale: 1, Timeline: make([]Second, 2)}
	if r.MeasureSending(); r.Saturated {
		t.Errorf("0.5%% behind and 0.9%% late: saturated")
	}
	r.LateStarts = 11
	if r.MeasureSending(); !r.Saturated {
		t.Errorf("1.1%% of the requests started late: not saturated")
	}
}
