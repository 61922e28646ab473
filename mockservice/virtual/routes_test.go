package virtual_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/virtual"
)

// patch sends PATCH /admin/config.
func (s served) patch(t *testing.T, body string) answer {
	t.Helper()
	return s.send(t, http.MethodPatch, api.PathAdminConfig, body)
}

// PATCH /admin/config changes the copy's workers (taking effect on the
// next requests), service time and rate under its name; a bad patch is
// 400 naming the field and changes nothing; GET shows the live settings.
func TestCopyLiveSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(1, 0, 100*ms)
		cfg.Copies[0].Rate = &config.TokenBucket{PerSecond: 1000, Burst: 100, RetryAfter: 2 * time.Second}
		s := serve(t, cfg)
		statuses := func(as []answer) map[int]int {
			m := map[int]int{}
			for _, a := range as {
				m[a.status]++
			}
			return m
		}
		if got := statuses(s.concurrently(t, 2, http.MethodPost, "/v1/charge")); got[200] != 1 || got[503] != 1 {
			t.Errorf("two at once on one worker: %v, want one served and one 503", got)
		}
		if a := s.patch(t, `{"payments": {"workers": 2}}`); a.status != 200 || !strings.Contains(a.body, `"workers":2`) {
			t.Fatalf("patch: %d %s", a.status, a.body)
		}
		if got := statuses(s.concurrently(t, 2, http.MethodPost, "/v1/charge")); got[200] != 2 {
			t.Errorf("two at once on two workers: %v, want both served", got)
		}
		if a := s.patch(t, `{"payments": {"service": {"value": "30ms"}, "rate": {"per_second": 2, "burst": 1}}}`); a.status != 200 {
			t.Fatalf("patch: %d %s", a.status, a.body)
		}
		// The bucket held 100 tokens; at burst 1 it holds at most one.
		first, second := s.send(t, http.MethodPost, "/v1/charge", ""), s.send(t, http.MethodPost, "/v1/charge", "")
		if first.status != 200 || first.took != 30*ms || second.status != 429 || second.header.Get("Retry-After") != "2" {
			t.Errorf("after the patch: %d in %v, then %d (Retry-After %q); want 200 in 30 ms, then 429 with Retry-After 2",
				first.status, first.took, second.status, second.header.Get("Retry-After"))
		}
		for _, c := range []struct{ body, want string }{
			{`{"payments": {"workers": 0}}`, "payments.workers: 0 must be ≥ 1"},
			{`{"payments": {"rate": {"burst": 0}}}`, "payments.rate.burst: 0 must be ≥ 1"},
			{`{"enrichment": {"workers": 3}}`, "enrichment: unknown station (one of payments)"},
		} {
			if a := s.patch(t, c.body); a.status != 400 || !strings.Contains(a.body, c.want) {
				t.Errorf("%s: %d %s, want 400 naming %q", c.body, a.status, a.body, c.want)
			}
		}
		a := s.send(t, http.MethodGet, api.PathAdminConfig, "")
		var live map[string]virtual.LiveCopy
		if err := json.Unmarshal([]byte(a.body), &live); err != nil {
			t.Fatal(err)
		}
		p := live["payments"]
		if len(live) != 1 || p.Workers != 2 || p.Queue != 0 || p.RejectStatus != 503 || p.Service["value"] != "30ms" || p.Service["kind"] != "fixed" ||
			p.Rate == nil || *p.Rate != (virtual.LiveRate{PerSecond: 2, Burst: 1, Status: 429, RetryAfter: "2s"}) {
			t.Errorf("GET /admin/config: %s", a.body)
		}
	})
}

// Only the copy's method on its paths reaches the station: another path
// or method is 404 and counted nowhere; OPTIONS on a path identifies the
// copy as the lab's service does (api.Client.Identify), without reaching
// the station either; /healthz answers; with a token, the admin routes
// need it and /metrics does not.
func TestCopyRoutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(1, 0, 10*ms)
		cfg.TimeScale, cfg.AdminToken = 0.1+0.2, "secret"
		cfg.Copies[0].Paths = []string{"/v1/charge", "/v1/refund"}
		s := serve(t, cfg)
		for _, c := range []struct{ method, path string }{
			{http.MethodPost, "/v1/other"}, {http.MethodGet, "/v1/charge"}, {http.MethodPut, "/v1/refund"},
			{http.MethodPost, "/v1/charge/"}, {http.MethodPost, "/"}, {http.MethodPost, api.PathMetrics}, {http.MethodGet, api.PathEnrich},
		} {
			if a := s.send(t, c.method, c.path, "{}"); a.status != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", c.method, c.path, a.status)
			}
		}
		ctx := context.Background()
		for _, path := range cfg.Copies[0].Paths {
			id, err := s.client.Identify(ctx, path)
			if err != nil || id.Version != mockservice.Version() || id.TimeScale != cfg.TimeScale {
				t.Errorf("Identify %s: %+v, %v; want version %s, time scale %v", path, id, err, mockservice.Version(), cfg.TimeScale)
			}
			if a := s.send(t, http.MethodOptions, path, ""); a.status != http.StatusNoContent || a.header.Get("Allow") != "POST, OPTIONS" {
				t.Errorf("OPTIONS %s: %d, Allow %q", path, a.status, a.header.Get("Allow"))
			}
		}
		if err := s.client.Healthy(ctx); err != nil {
			t.Errorf("healthz: %v", err)
		}
		for _, path := range []string{api.PathAdminStats, api.PathAdminConfig} {
			if a := s.send(t, http.MethodGet, path, ""); a.status != http.StatusUnauthorized {
				t.Errorf("GET %s without the token: %d, want 401", path, a.status)
			}
		}
		if a := s.send(t, http.MethodPost, api.PathAdminReset, ""); a.status != http.StatusUnauthorized {
			t.Errorf("reset without the token: %d, want 401", a.status)
		}
		scraped, err := s.client.Scrape(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := s.client.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for from, st := range map[string]api.Stats{"/metrics": scraped, "/admin/stats": stats} {
			p := st.Stations["payments"]
			if total(p) != 0 || p.HighWater.Offered != 0 || p.Draws != 0 || st.TimeScale != cfg.TimeScale {
				t.Errorf("%s after 404s, OPTIONS and admin: %+v; want nothing counted", from, st)
			}
		}
		if a := s.send(t, http.MethodPost, "/v1/refund", ""); a.status != http.StatusOK || a.took != 3*ms {
			t.Errorf("POST /v1/refund: %d in %v, want 200 in 10 ms × 0.3", a.status, a.took)
		}
	})
}

// Start serves each copy on its own address, port 0 giving a port of the
// system's; stop shuts them all and may be called again. Two copies may
// not take one address.
func TestStartServesEachCopyOnItsAddress(t *testing.T) {
	cfg := fixedCopy(2, 0, 0)
	geo := cfg.Copies[0]
	geo.Name, geo.Method, geo.Paths = "geo", http.MethodGet, []string{"/geo"}
	cfg.Copies = append(cfg.Copies, geo)
	urls, stop, err := virtual.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(urls) != 2 || urls["payments"] == urls["geo"] || strings.HasSuffix(urls["geo"], ":0") {
		t.Fatalf("urls %v: want two addresses, each with its real port", urls)
	}
	ask := func(method, url string) int {
		req, _ := http.NewRequest(method, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if p, g, wrong := ask(http.MethodPost, urls["payments"]+"/v1/charge"), ask(http.MethodGet, urls["geo"]+"/geo"), ask(http.MethodGet, urls["payments"]+"/geo"); p != 200 || g != 200 || wrong != 404 {
		t.Errorf("payments %d, geo %d, geo's path at payments %d; want 200, 200, 404", p, g, wrong)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("stop again: %v", err)
	}
	if _, err := http.Get(urls["geo"] + "/geo"); err == nil {
		t.Errorf("geo still answers after stop")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg.Copies[1].Listen = taken.Addr().String()
	if _, _, err := virtual.Start(cfg); err == nil || !strings.Contains(err.Error(), "geo: listen") {
		t.Errorf("a taken address: %v, want geo's listen error", err)
	}
}

// Over listeners of the caller's (an in-memory network's, on a fake
// clock), stop lets a request in flight finish, and nothing of the copies
// is left running after it (synctest would say).
func TestStartOnStopsCleanly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(1, 0, 200*ms)
		cfg.Copies[0].Service = latency.Spec{Kind: latency.KindFixed, Value: 200 * ms}
		nw := mocktest.NewNetwork()
		ln, err := nw.Listen("payments.memory:80")
		if err != nil {
			t.Fatal(err)
		}
		copies, urls, stop, err := virtual.StartOn(cfg, []net.Listener{ln})
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Transport: &http.Transport{DialContext: nw.Dial}}
		defer hc.CloseIdleConnections()
		done := make(chan int)
		go func() {
			resp, err := hc.Post(urls["payments"]+"/v1/charge", "application/json", nil)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		time.Sleep(50 * ms)
		start := time.Now()
		if err := stop(); err != nil || time.Since(start) < 150*ms {
			t.Errorf("stop: %v after %v; want nil once the request in flight ended (150 ms)", err, time.Since(start))
		}
		if code := <-done; code != 200 || copies[0].Stats().Stations["payments"].Requests[api.OutcomeServed] != 1 {
			t.Errorf("the request in flight: %d; want it served", code)
		}
		if _, err := hc.Get(urls["payments"] + api.PathHealthz); err == nil {
			t.Errorf("healthz answered after stop")
		}
		if _, _, _, err := virtual.StartOn(cfg, nil); err == nil {
			t.Errorf("no listener for a copy: no error")
		}
		bad := cfg
		bad.Copies = nil
		if _, _, err := virtual.Start(bad); err == nil || !strings.Contains(err.Error(), "copies: at least one") {
			t.Errorf("no copies: %v", err)
		}
	})
}

// mocktest.StartCopies, the way other packages' tests start copies,
// serves each copy of a configuration on a host of its own, reached by
// its URL and client by name.
func TestMocktestStartsCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(2, 0, 20*ms)
		geo := cfg.Copies[0]
		geo.Name, geo.Method, geo.Paths = "geo", http.MethodGet, []string{"/geo"}
		cfg.Copies = append(cfg.Copies, geo)
		m := mocktest.StartCopies(t, mocktest.CopiesOptions{Config: cfg, InMemory: true})
		resp, err := m.HTTP.Get(m.URLs["geo"] + "/geo")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ctx := context.Background()
		g, err := m.Clients["geo"].Scrape(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Clients["payments"].Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || g.Stations["geo"].Requests[api.OutcomeServed] != 1 || total(p.Stations["payments"]) != 0 || m.TimeScale != 1 ||
			m.Copies["geo"].Name() != "geo" || m.URLs["geo"] == m.URLs["payments"] {
			t.Errorf("GET /geo %d; geo %+v, payments %+v; urls %v", resp.StatusCode, g.Stations, p.Stations, m.URLs)
		}
	})
}

// A path ending in /* answers every path below it, and only those; a *
// elsewhere is refused by name.
func TestCopyPathBelow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(1, 0, 10*ms)
		cfg.Copies[0].Paths = []string{"/lookup/*"}
		s := serve(t, cfg)
		for path, want := range map[string]int{"/lookup/42": http.StatusOK, "/lookup/a/b": http.StatusOK, "/lookup": http.StatusNotFound, "/lookups/1": http.StatusNotFound} {
			if a := s.send(t, http.MethodPost, path, "{}"); a.status != want {
				t.Errorf("POST %s: %d, want %d", path, a.status, want)
			}
		}
	})
	cfg := fixedCopy(1, 0, 10*ms)
	cfg.Copies[0].Paths = []string{"/a*/b"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "paths[0]") {
		t.Errorf("a * inside a path: %v", err)
	}
}
