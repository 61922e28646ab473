package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
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
