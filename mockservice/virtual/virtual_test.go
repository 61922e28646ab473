package virtual_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/virtual"
)

// The copy's timing is the subject of these tests: each serves the real
// copy over the in-memory wire inside a synctest bubble, on its fake
// clock (exact durations, no margins).

const ms = time.Millisecond

// fixedCopy is one copy, "payments", answering POST /v1/charge with a
// fixed service time.
func fixedCopy(workers, queue int, service time.Duration) config.Copies {
	return config.Copies{Seed: 1, Copies: []config.Virtual{{
		Name: "payments", Listen: "127.0.0.1:0", Method: http.MethodPost, Paths: []string{"/v1/charge"},
		Station: config.Station{Workers: workers, Queue: queue},
		Service: latency.Spec{Kind: latency.KindFixed, Value: service},
	}}}
}

// served is a copy served over the in-memory wire.
type served struct {
	copy   *virtual.Copy
	url    string
	http   *http.Client
	client api.Client
}

// serve serves copy 0 of cfg until the test ends; call it in the bubble.
func serve(t *testing.T, cfg config.Copies) served {
	t.Helper()
	c, err := virtual.New(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	url, dial := mocktest.Serve(t, c.Handler())
	hc := &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 16}}
	t.Cleanup(hc.CloseIdleConnections)
	return served{copy: c, url: url, http: hc, client: api.Client{BaseURL: url, Token: cfg.AdminToken, HTTP: hc, Dial: dial}}
}

// answer is what a client saw of one request.
type answer struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

// send makes one request and reads its answer whole.
func (s served) send(t *testing.T, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), took: time.Since(start)}
}

// concurrently sends n requests at once and returns their answers.
func (s served) concurrently(t *testing.T, n int, method, path string) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = s.send(t, method, path, `{"amount": 5}`) })
	}
	wg.Wait()
	return out
}

// total is every request a station's stats count: each outcome's, and
// the token bucket's refusals.
func total(st api.StationStats) float64 {
	n := st.RateLimited
	for _, v := range st.Requests {
		n += v
	}
	return n
}

// 3 workers × 40 ms and 2 queue slots: 5 requests at once are served in a
// wave at 40 ms and one at 80 ms, the 6th is refused at once with 503 and
// Retry-After 1 (the configured 1s), and the copy's stats, in
// /admin/stats and in /metrics alike, count what the clients saw.
func TestCopyServesInWavesAndRefusesBeyondTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(3, 2, 40*ms)
		cfg.Copies[0].RetryAfter = time.Second
		s := serve(t, cfg)
		done := make(chan []answer)
		go func() { done <- s.concurrently(t, 5, http.MethodPost, "/v1/charge") }()
		synctest.Wait() // all five admitted: three served, two queued
		sixth := s.send(t, http.MethodPost, "/v1/charge", "{}")
		if sixth.status != http.StatusServiceUnavailable || sixth.header.Get("Retry-After") != "1" || sixth.took != 0 || !strings.Contains(sixth.body, "queue full") {
			t.Errorf("sixth: %d, Retry-After %q, after %v, %s; want 503, Retry-After 1, at once", sixth.status, sixth.header.Get("Retry-After"), sixth.took, sixth.body)
		}
		var took []time.Duration
		for _, a := range <-done {
			took = append(took, a.took)
			if a.status != http.StatusOK || a.body != "{}" || a.header.Get("Content-Type") != "application/json" || a.header.Get(api.HeaderService) != "40.000" {
				t.Errorf("served: %d %q (%s), service %s ms; want 200 {} as JSON, 40 ms", a.status, a.body, a.header.Get("Content-Type"), a.header.Get(api.HeaderService))
			}
		}
		slices.Sort(took)
		if want := []time.Duration{40 * ms, 40 * ms, 40 * ms, 80 * ms, 80 * ms}; !slices.Equal(took, want) {
			t.Errorf("five at once took %v, want %v", took, want)
		}
		ctx := context.Background()
		stats, err := s.client.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		scraped, err := s.client.Scrape(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for from, st := range map[string]api.Stats{"/admin/stats": stats, "/metrics": scraped} {
			p := st.Stations["payments"]
			if len(st.Stations) != 1 || p.Requests[api.OutcomeServed] != 5 || p.Requests[api.OutcomeRejected] != 1 || p.RateLimited != 0 || total(p) != 6 ||
				p.Workers != 3 || p.QueueCapacity != 2 || p.HighWater.Busy != 3 || p.HighWater.Queue != 2 || p.HighWater.Offered != 6 || p.Draws != 5 {
				t.Errorf("%s: %+v; want payments alone: 5 served, 1 rejected of 6, 3 busy and 2 queued at most, 6 offered, 5 draws", from, st)
			}
			if st.TimeScale != 1 || st.Seed != 1 {
				t.Errorf("%s: time scale %v, seed %d; want 1 and 1", from, st.TimeScale, st.Seed)
			}
		}
	})
}

// A token bucket of 20 a second, burst 1, answering 429 with Retry-After
// 1: over one lab second a closed loop of 4 users gets the token in the
// bucket and the 20 the second adds (on the fake clock exactly: one at 0,
// then one every 50 ms through 1 s); every other request is refused at
// once with 429 and Retry-After, never reaches the station, and is
// counted apart, so that accepted + station refusals + rate refusals is
// every request sent. At time scale 0.25 the lab second is a quarter of
// a real one, and the rate four times as high; Retry-After is as given.
func TestCopyTokenBucketRefusesBeyondItsRate(t *testing.T) {
	for _, scale := range []float64{1, 0.25} {
		t.Run(fmt.Sprint("time scale ", scale), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testTokenBucket(t, scale) })
		})
	}
}

func testTokenBucket(t *testing.T, scale float64) {
	cfg := fixedCopy(4, 0, 10*ms)
	cfg.TimeScale = scale
	cfg.Copies[0].Rate = &config.TokenBucket{PerSecond: 20, Burst: 1, RetryAfter: 500 * ms}
	s := serve(t, cfg)
	var mu sync.Mutex
	got := map[int]int{}
	badRefusal := 0
	start := time.Now()
	second := time.Duration(float64(time.Second) * scale)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for time.Since(start) <= second {
				a := s.send(t, http.MethodPost, "/v1/charge", "{}")
				mu.Lock()
				got[a.status]++
				if a.status == http.StatusTooManyRequests && (a.header.Get("Retry-After") != "1" || a.took != 0 || !strings.Contains(a.body, "rate limited")) {
					badRefusal++
				}
				mu.Unlock()
				if a.status != http.StatusOK {
					// A refusal takes no time: on a fake clock a closed
					// loop must let some pass before it asks again.
					time.Sleep(ms)
				}
			}
		})
	}
	wg.Wait()
	sent := got[200] + got[429]
	if got[200] != 21 || got[429] == 0 || len(got) != 2 || badRefusal > 0 {
		t.Errorf("a lab second of 4 users: %v (%d refusals without Retry-After 1 or not at once); want 20 + 1 accepted, the rest 429", got, badRefusal)
	}
	st, err := s.client.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := st.Stations["payments"]
	if p.Requests[api.OutcomeServed] != float64(got[200]) || p.RateLimited != float64(got[429]) || p.Requests[api.OutcomeRejected] != 0 ||
		total(p) != float64(sent) || p.HighWater.Offered != 1 {
		t.Errorf("server: %+v; want %d served, %d rate limited, %d in all, never more than one at the station", p, got[200], got[429], sent)
	}
	// A reset fills the bucket and zeroes the count.
	if err := s.client.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := s.send(t, http.MethodPost, "/v1/charge", "{}"); a.status != http.StatusOK {
		t.Errorf("after a reset: %d, want the bucket's token", a.status)
	}
	if st, _ := s.client.Stats(context.Background()); st.Stations["payments"].RateLimited != 0 || total(st.Stations["payments"]) != 1 {
		t.Errorf("after a reset and one request: %+v", st.Stations["payments"])
	}
}

// A copy's service times are the seeded draws of its distribution (an
// empirical one here) under its own stream, api.CopySeed(seed, name),
// times the time scale; a reset draws the same sequence again, a reset
// with another seed another.
func TestCopyDrawsItsEmpiricalServiceTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := latency.Spec{Kind: latency.KindEmpirical, Quantiles: []latency.Quantile{
			{Q: 0, Value: 5 * ms}, {Q: 0.5, Value: 20 * ms}, {Q: 0.9, Value: 60 * ms}, {Q: 1, Value: 200 * ms}}}
		cfg := fixedCopy(1, config.UnboundedQueue, 0)
		cfg.Copies[0].Service, cfg.TimeScale, cfg.Seed = spec, 0.5, 42
		s := serve(t, cfg)
		dist, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		want := func(seed uint32, n int) []string {
			src := latency.NewMulberry32(api.CopySeed(seed, "payments"))
			var out []string
			for range n {
				out = append(out, millisOf(time.Duration(float64(dist.Sample(src))*0.5)))
			}
			return out
		}
		draws := func(n int) []string {
			var out []string
			for range n {
				out = append(out, s.send(t, http.MethodPost, "/v1/charge", "").header.Get(api.HeaderService))
			}
			return out
		}
		if got, w := draws(200), want(42, 200); !slices.Equal(got, w) {
			t.Errorf("service times %v…, want the seeded draws × 0.5 %v…", got[:5], w[:5])
		}
		if err := s.client.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, w := draws(5), want(42, 5); !slices.Equal(got, w) {
			t.Errorf("after a reset: %v, want the sequence again %v", got, w)
		}
		if err := s.client.ResetSeed(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		if got, w := draws(5), want(9, 5); !slices.Equal(got, w) {
			t.Errorf("after a reset with seed 9: %v, want %v", got, w)
		}
		if st, _ := s.client.Stats(context.Background()); st.Seed != 9 || st.Stations["payments"].Draws != 5 {
			t.Errorf("stats after the reset with seed 9: seed %d, %d draws", st.Seed, st.Stations["payments"].Draws)
		}
	})
}

// millisOf is d as X-Service-Ms writes it: milliseconds, three decimals.
func millisOf(d time.Duration) string {
	return fmt.Sprintf("%.3f", float64(d.Round(time.Microsecond))/float64(time.Millisecond))
}

// With a slowdown of 1, 1.5 and 2, four requests at once on four workers
// take 40, 60, 80 and 80 ms (the last factor beyond the list), and one
// alone 40 ms.
func TestCopySlowsDownWithTheRequestsInService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := fixedCopy(4, 0, 40*ms)
		cfg.Copies[0].Slowdown = []float64{1, 1.5, 2}
		s := serve(t, cfg)
		var got []string
		for _, a := range s.concurrently(t, 4, http.MethodPost, "/v1/charge") {
			got = append(got, a.header.Get(api.HeaderService))
		}
		slices.Sort(got)
		if want := []string{"40.000", "60.000", "80.000", "80.000"}; !slices.Equal(got, want) {
			t.Errorf("four at once: service %v ms, want %v", got, want)
		}
		if a := s.send(t, http.MethodPost, "/v1/charge", ""); a.header.Get(api.HeaderService) != "40.000" || a.took != 40*ms {
			t.Errorf("one alone: service %s ms in %v, want 40 ms", a.header.Get(api.HeaderService), a.took)
		}
	})
}
