package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The open generator sends through a pool of senders that grows only when
// every sender is busy: 400 arrivals against a fast endpoint take a handful
// of senders, not a goroutine each.
func TestSendersAreReused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	sc := OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 200, 200
	for _, client := range []HTTPClient{ClientNetHTTP, ClientFastHTTP} {
		// Every arrival is accounted for, every time. Few senders and few
		// pending need a machine that kept up: a VM whose host stole its
		// CPU stalled the pacer and spawned senders (49 once); such a
		// round is measured again, up to three times.
		for attempt := 1; ; attempt++ {
			g := sendersRound(t, srv.URL+"/x", sc, client)
			onTime, pending := g.replies[ReplyOnTime], g.replies[ReplyPending]
			if g.sent+g.behind != 400 || onTime+pending != g.sent {
				t.Fatalf("%s: sent %d, behind %d, replies %v: want 400 arrivals, each sent or behind, each sent one answered on time or pending",
					client, g.sent, g.behind, g.replies)
			}
			t.Logf("%s, round %d: %d senders for %d requests, %d behind, %d pending", client, attempt, g.senders, g.sent, g.behind, pending)
			if pending <= 2 && g.senders <= 40 {
				break
			}
			if attempt == 3 {
				t.Errorf("%s: %d senders and %d pending in the last of 3 rounds; want at most 40 senders and 2 pending", client, g.senders, pending)
				break
			}
		}
	}
}

// sendersRound runs two seconds of the open schedule against target with
// client, and returns the generator with its counts.
func sendersRound(t *testing.T, target string, sc Schedule, client HTTPClient) *generator {
	t.Helper()
	cfg := Config{Target: target, Schedule: sc, Arrivals: ArrivalsUniform, TimeScale: 0.5, Client: client}
	g := newGenerator(cfg, RealClock)
	u, _ := url.Parse(cfg.Target)
	if client == ClientFastHTTP {
		g.client = newFastHTTP(u, RealClock)
	} else {
		g.client = newNetHTTP(u, g.inFlightCap, RealClock)
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
// that takes 100 ms need about 20 senders. A stall of the machine longer
// than the late threshold (50 ms real) puts an arrival behind however
// the pool grows (199 of 200 sent once, on a VM whose host took its
// CPU): the round is measured again, up to three times, and fails when
// none sent all 200 on time.
func TestPoolGrowsForASlowEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(100 * time.Millisecond) }))
	defer srv.Close()
	sc := OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 100, 100
	var got []string
	for attempt := 1; attempt <= 3; attempt++ {
		g := sendersRound(t, srv.URL+"/x", sc, ClientFastHTTP) // 0.5 s per model second: 200 arrivals a second
		if g.sent == 200 && g.behind == 0 && g.late == 0 && g.senders >= 15 {
			return
		}
		got = append(got, fmt.Sprintf("sent %d, behind %d, late %d with %d senders", g.sent, g.behind, g.late, g.senders))
	}
	t.Errorf("%s; want all 200 sent on time by at least 15 senders in one of 3 attempts", strings.Join(got, "; "))
}

// A generator that could not keep its schedule says so, with the rate it
// reached.
func TestSaturationIsSaid(t *testing.T) {
	r := Result{Scheduled: 1000, Requests: 900, Behind: 100, TimeScale: 0.5, Timeline: make([]Second, 4)}
	r.measureSending()
	if !r.Saturated || r.SentPerRealSecond != 450 {
		t.Fatalf("saturated %v at %v requests/s; want saturated at 450", r.Saturated, r.SentPerRealSecond)
	}
	if got := Saturation(r); !strings.Contains(got, "GENERATOR SATURATED: it sent 450 requests per real second of the 500 scheduled (10.0% behind") {
		t.Errorf("Saturation: %q", got)
	}
	r = Result{Scheduled: 1000, Requests: 995, Behind: 5, LateStarts: 9, TimeScale: 1, Timeline: make([]Second, 2)}
	if r.measureSending(); r.Saturated {
		t.Errorf("0.5%% behind and 0.9%% late: saturated")
	}
	r.LateStarts = 11
	if r.measureSending(); !r.Saturated {
		t.Errorf("1.1%% of the requests started late: not saturated")
	}
}
