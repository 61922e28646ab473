package mockservice_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// fixedEnrichment is the default service with a fixed enrichment time.
func fixedEnrichment(d time.Duration) config.Config {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Enrichment = latency.Spec{Kind: "fixed", Value: d}
	cfg.Profiles[config.ProfileHealthy] = p
	return cfg
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}}
}

func serveBare(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	// The same work a route does around the station: decode a small JSON
	// body, encode a small JSON answer.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RecordID string `json:"record_id"`
			Step     int    `json:"step"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"record_id": req.RecordID, "step": req.Step})
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func serveMock(b *testing.B, cfg config.Config) string {
	b.Helper()
	return mocktest.Start(b, mocktest.Options{Config: cfg}).URL
}

const enrichBody = `{"record_id":"r1","step":1}`

func hammer(b *testing.B, url string) {
	client := benchClient()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(enrichBody))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkOverhead compares a request through a station with zero service
// time against a bare net/http handler doing the same JSON work, both over
// loopback HTTP. The difference per op is the station's own overhead.
func BenchmarkOverhead(b *testing.B) {
	b.Run("bare-net-http", func(b *testing.B) { hammer(b, serveBare(b)+"/enrich") })
	b.Run("station", func(b *testing.B) { hammer(b, serveMock(b, fixedEnrichment(0))+"/enrich") })
}

// BenchmarkStationDo is the admission path alone, without HTTP.
func BenchmarkStationDo(b *testing.B) {
	st, err := mockservice.NewStation("bench", config.Station{Workers: 256, Queue: -1, RejectStatus: 503},
		latency.Fixed{}, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			closeFn := st.Open()
			st.Do(ctx, "")
			closeFn()
		}
	})
}

// BenchmarkServiceTimeStray sends requests on an open schedule of 200/s to
// an enrichment station with a fixed 30 ms service time, and reports how far
// the server's measured service time (X-Service-Ms) and the client's
// latency stray from the configured 30 ms, at p50 and p99, in microseconds.
func BenchmarkServiceTimeStray(b *testing.B) {
	const configured = 30 * time.Millisecond
	const interval = 5 * time.Millisecond // 200 requests/s
	url := serveMock(b, fixedEnrichment(configured)) + "/enrich"
	client := benchClient()
	server := make([]time.Duration, b.N)
	clientLat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Go(func() {
			t0 := time.Now()
			resp, err := client.Post(url, "application/json", strings.NewReader(enrichBody))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			clientLat[i] = time.Since(t0) - configured
			ms, _ := strconv.ParseFloat(resp.Header.Get(api.HeaderService), 64)
			server[i] = time.Duration(ms*1e6) - configured
		})
	}
	wg.Wait()
	b.StopTimer()
	pct := func(xs []time.Duration, p float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(pct(server, 0.50), "server-stray-p50-µs")
	b.ReportMetric(pct(server, 0.99), "server-stray-p99-µs")
	b.ReportMetric(pct(clientLat, 0.50), "client-stray-p50-µs")
	b.ReportMetric(pct(clientLat, 0.99), "client-stray-p99-µs")
}
