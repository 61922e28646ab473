package mockservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// startService runs the real service on a loopback port until the test ends.
func startService(t *testing.T, cfg config.Config) (string, *mockservice.Service) {
	t.Helper()
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url, svc := m.URL, m.Service
	return url, svc
}

type reply struct {
	status    int
	queueWait time.Duration
	body      []byte
	err       error
}

func post(client *http.Client, url, body string) reply {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	ms, _ := strconv.ParseFloat(resp.Header.Get(api.HeaderQueueWait), 64)
	return reply{status: resp.StatusCode, queueWait: time.Duration(ms * float64(time.Millisecond)), body: b}
}

func writeBody(id string) string { return fmt.Sprintf(`{"id":%q,"complete":true}`, id) }

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Real time: 13 writes at once under slow-write (150 ms per write, doubled
// by the time scale for slack) against 6 workers and 6 queue slots.
func TestThirteenWritesUnderSlowWrite(t *testing.T) {
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowWrite
	cfg.TimeScale = 2
	url, _ := startService(t, cfg)

	const n = 13
	replies := make([]reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i] = post(client, url+"/records", writeBody(fmt.Sprint("r", i)))
		})
	}
	close(start)
	wg.Wait()

	var created, refused, immediate, queued int
	for i, r := range replies {
		switch {
		case r.err != nil:
			t.Fatalf("request %d: %v", i, r.err)
		case r.status == http.StatusServiceUnavailable:
			refused++
		case r.status == http.StatusCreated && r.queueWait < 150*time.Millisecond:
			created++
			immediate++
		case r.status == http.StatusCreated:
			created++
			queued++
		default:
			t.Errorf("request %d: status %d %s", i, r.status, r.body)
		}
	}
	if created != 12 || refused != 1 || immediate != 6 || queued != 6 {
		t.Errorf("got %d created (%d at once, %d after queueing), %d refused; want 12 (6, 6), 1",
			created, immediate, queued, refused)
	}
	want := `
# HELP loadlab_mock_requests_total Requests that reached a station, by how they ended: served, rejected (queue full), served_after_client_left, cancelled (client left, cancel-on-disconnect on).
# TYPE loadlab_mock_requests_total counter
loadlab_mock_requests_total{outcome="cancelled",service="enrichment"} 0
loadlab_mock_requests_total{outcome="cancelled",service="records"} 0
loadlab_mock_requests_total{outcome="rejected",service="enrichment"} 0
loadlab_mock_requests_total{outcome="rejected",service="records"} 1
loadlab_mock_requests_total{outcome="served",service="enrichment"} 0
loadlab_mock_requests_total{outcome="served",service="records"} 12
loadlab_mock_requests_total{outcome="served_after_client_left",service="enrichment"} 0
loadlab_mock_requests_total{outcome="served_after_client_left",service="records"} 0
# HELP loadlab_mock_offered_concurrency_high_water Most requests open at the station at once since the last reset (counted once the body is complete and valid).
# TYPE loadlab_mock_offered_concurrency_high_water gauge
loadlab_mock_offered_concurrency_high_water{service="enrichment"} 0
loadlab_mock_offered_concurrency_high_water{service="records"} 13
# HELP loadlab_mock_busy_workers_high_water Most workers busy at once since the last reset.
# TYPE loadlab_mock_busy_workers_high_water gauge
loadlab_mock_busy_workers_high_water{service="enrichment"} 0
loadlab_mock_busy_workers_high_water{service="records"} 6
# HELP loadlab_mock_queue_length_high_water Longest queue since the last reset.
# TYPE loadlab_mock_queue_length_high_water gauge
loadlab_mock_queue_length_high_water{service="enrichment"} 0
loadlab_mock_queue_length_high_water{service="records"} 6
# HELP loadlab_mock_stored_writes Distinct record ids stored since the last reset.
# TYPE loadlab_mock_stored_writes gauge
loadlab_mock_stored_writes 12
`
	if err := testutil.ScrapeAndCompare(url+"/metrics", strings.NewReader(want),
		"loadlab_mock_requests_total", "loadlab_mock_offered_concurrency_high_water",
		"loadlab_mock_busy_workers_high_water", "loadlab_mock_queue_length_high_water",
		"loadlab_mock_stored_writes"); err != nil {
		t.Error(err)
	}
}

// oneWorker is a records station with one worker, an unbounded queue and
// fixed writes of d.
func oneWorker(d time.Duration, cancel bool) config.Config {
	cfg := config.Default()
	cfg.Records = config.Station{Workers: 1, Queue: config.UnboundedQueue,
		RejectStatus: 503, CancelOnDisconnect: cancel}
	p := cfg.Profiles[config.ProfileHealthy]
	p.Records = latency.Spec{Kind: "fixed", Value: d}
	cfg.Profiles[config.ProfileHealthy] = p
	return cfg
}

func requests(svc *mockservice.Service, out api.Outcome) float64 {
	return svc.Stats().Stations[api.Records].Requests[out]
}

func TestClientLeavingWhileQueuedIsStillServed(t *testing.T) {
	url, svc := startService(t, oneWorker(200*time.Millisecond, false))
	go post(&http.Client{}, url+"/records", writeBody("a"))
	waitFor(t, "first write in service", func() bool { return svc.Stats().Stations[api.Records].Busy == 1 })
	impatient := &http.Client{Timeout: 50 * time.Millisecond}
	if r := post(impatient, url+"/records", writeBody("b")); r.err == nil {
		t.Fatalf("impatient client got status %d, want a client timeout", r.status)
	}
	// Done means the handler has left the station too (offered back to 0):
	// the station counts a request served before its handler stores it.
	waitFor(t, "both writes done", func() bool {
		st := svc.Stats().Stations[api.Records]
		return requests(svc, api.OutcomeServed)+requests(svc, api.OutcomeServedAfterClientLeft) == 2 && st.Offered == 0
	})
	st := svc.Stats()
	rs := st.Stations[api.Records]
	if rs.Requests[api.OutcomeServedAfterClientLeft] != 1 || rs.Requests[api.OutcomeServed] != 1 {
		t.Errorf("requests %v, want 1 served and 1 served after the client left", rs.Requests)
	}
	if rs.WastedSeconds < 0.19 || rs.WastedSeconds > 0.6 {
		t.Errorf("wasted %.3f worker-seconds, want one write's 0.2 s", rs.WastedSeconds)
	}
	if st.StoredWrites != 2 {
		t.Errorf("stored %d writes, want 2: the abandoned write is still stored", st.StoredWrites)
	}
	m, err := testutil.GatherAndCount(svc.Registry(), "loadlab_mock_wasted_worker_seconds_total")
	if err != nil || m != 2 {
		t.Errorf("wasted-work metric: %d series, %v", m, err)
	}
}

func TestCancelOnDisconnectDropsQueuedWork(t *testing.T) {
	url, svc := startService(t, oneWorker(200*time.Millisecond, true))
	firstDone := make(chan reply, 1)
	go func() { firstDone <- post(&http.Client{}, url+"/records", writeBody("a")) }()
	waitFor(t, "first write in service", func() bool { return svc.Stats().Stations[api.Records].Busy == 1 })
	if r := post(&http.Client{Timeout: 50 * time.Millisecond}, url+"/records", writeBody("b")); r.err == nil {
		t.Fatalf("impatient client got status %d, want a client timeout", r.status)
	}
	waitFor(t, "cancellation counted", func() bool { return requests(svc, api.OutcomeCancelled) == 1 })
	// The next write waits only for the first, not for the dropped one.
	third := post(&http.Client{Timeout: 5 * time.Second}, url+"/records", writeBody("c"))
	if third.err != nil || third.status != http.StatusCreated {
		t.Fatalf("third write: %v %d", third.err, third.status)
	}
	if third.queueWait > 150*time.Millisecond {
		t.Errorf("third write waited %v in the queue; the dropped write should not have been served", third.queueWait)
	}
	<-firstDone
	st := svc.Stats()
	rs := st.Stations[api.Records]
	if rs.Requests[api.OutcomeServed] != 2 || rs.WastedSeconds != 0 || st.StoredWrites != 2 {
		t.Errorf("requests %v, wasted %.3f s, stored %d; want 2 served, 0 wasted, 2 stored",
			rs.Requests, rs.WastedSeconds, st.StoredWrites)
	}
}

func do(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminProfileResetAndToken(t *testing.T) {
	cfg := config.Default()
	cfg.AdminToken = "s3cret"
	url, svc := startService(t, cfg)

	if code, _ := do(t, "POST", url+"/admin/reset", "", ""); code != http.StatusUnauthorized {
		t.Errorf("reset without token: %d, want 401", code)
	}
	if code, _ := do(t, "GET", url+"/admin/stats", "wrong", ""); code != http.StatusUnauthorized {
		t.Errorf("stats with a wrong token: %d, want 401", code)
	}
	code, body := do(t, "PUT", url+"/admin/profile", "s3cret", `{"profile":"nope"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "healthy, slow-enrichment, slow-write") {
		t.Errorf("unknown profile: %d %s, want 400 naming the valid ones", code, body)
	}

	c := &http.Client{Timeout: 5 * time.Second}
	serviceMs := func() float64 {
		resp, err := c.Post(url+"/records", "application/json", strings.NewReader(writeBody(fmt.Sprint(time.Now().UnixNano()))))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ms, _ := strconv.ParseFloat(resp.Header.Get(api.HeaderService), 64)
		return ms
	}
	if ms := serviceMs(); ms < 29 || ms > 100 {
		t.Errorf("healthy write took %.1f ms, want 30", ms)
	}
	if code, body := do(t, "PUT", url+"/admin/profile", "s3cret", `{"profile":"slow-write"}`); code != http.StatusOK {
		t.Fatalf("switch profile: %d %s", code, body)
	}
	if ms := serviceMs(); ms < 149 || ms > 250 {
		t.Errorf("slow-write write took %.1f ms, want 150", ms)
	}
	if st := svc.Stats(); st.StoredWrites != 2 || st.Stations[api.Records].HighWater.Offered != 1 {
		t.Fatalf("before reset: %+v", st)
	}
	if got := histogramCount(t, svc, "loadlab_mock_service_seconds", "records"); got != 2 {
		t.Fatalf("service-time histogram count before reset %d, want 2", got)
	}
	if code, _ := do(t, "POST", url+"/admin/reset", "s3cret", ""); code != http.StatusOK {
		t.Fatalf("reset: %d", code)
	}
	code, body = do(t, "GET", url+"/admin/stats", "s3cret", "")
	var st api.Stats
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusOK {
		t.Fatalf("stats: %d %s %v", code, body, err)
	}
	rs := st.Stations[api.Records]
	if st.StoredWrites != 0 || rs.HighWater.Offered != 0 || rs.Requests[api.OutcomeServed] != 0 || st.Profile != "slow-write" {
		t.Errorf("after reset: %+v; want zero counters and the profile kept", st)
	}
	if got := histogramCount(t, svc, "loadlab_mock_service_seconds", "records"); got != 0 {
		t.Errorf("service-time histogram count after reset %d, want 0", got)
	}
	// The histograms the reset made are the ones requests go into.
	serviceMs()
	if got := histogramCount(t, svc, "loadlab_mock_service_seconds", "records"); got != 1 {
		t.Errorf("service-time histogram count after reset and one write %d, want 1", got)
	}
	if got := histogramCount(t, svc, "loadlab_mock_queue_wait_seconds", "records"); got != 1 {
		t.Errorf("queue-wait histogram count after reset and one write %d, want 1", got)
	}
}

// histogramCount reads a histogram's sample count from the registry.
func histogramCount(t *testing.T, svc *mockservice.Service, name, service string) uint64 {
	t.Helper()
	mfs, err := svc.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service" && l.GetValue() == service {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	t.Fatalf("no %s{service=%q}", name, service)
	return 0
}

func TestShutdownLetsWorkFinish(t *testing.T) {
	cfg := oneWorker(300*time.Millisecond, false)
	cfg.Listen = "127.0.0.1:0"
	svc, url, stop, err := mockservice.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan reply, 1)
	go func() { got <- post(&http.Client{}, url+"/records", writeBody("x")) }()
	waitFor(t, "write in service", func() bool { return svc.Stats().Stations[api.Records].Busy == 1 })
	if err := stop(); err != nil {
		t.Errorf("serve: %v, want a clean stop", err)
	}
	if r := <-got; r.err != nil || r.status != http.StatusCreated {
		t.Errorf("in-flight write: %v %d, want 201", r.err, r.status)
	}
}

func TestShutdownTimeoutIsReported(t *testing.T) {
	cfg := oneWorker(2*time.Second, false)
	cfg.Listen, cfg.ShutdownTimeout = "127.0.0.1:0", 50*time.Millisecond
	svc, url, stop, err := mockservice.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go post(&http.Client{}, url+"/records", writeBody("x"))
	waitFor(t, "write in service", func() bool { return svc.Stats().Stations[api.Records].Busy == 1 })
	if err := stop(); !errors.Is(err, mockservice.ErrForcedShutdown) {
		t.Errorf("serve: %v, want ErrForcedShutdown", err)
	}
}

// promtool (Debian's prometheus package) must accept every metric name.
func TestMetricsPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not installed; .ci/run installs Debian's prometheus package")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	cfg := config.Default()
	cfg.TimeScale = 0.01
	url, _ := startService(t, cfg)
	post(http.DefaultClient, url+"/records", writeBody("m"))
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// Scraping /metrics rebuilds exactly what /admin/stats reports.
func TestScrapeMatchesStats(t *testing.T) {
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowWrite
	cfg.TimeScale = 0.2
	url, svc := startService(t, cfg)
	var wg sync.WaitGroup
	for i := range 14 {
		wg.Go(func() { post(http.DefaultClient, url+"/records", writeBody(fmt.Sprint("s", i%13))) })
	}
	wg.Wait()
	post(http.DefaultClient, url+"/enrich", `{"record_id":"a","step":1}`)
	got, err := api.Client{BaseURL: url, HTTP: http.DefaultClient}.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := svc.Stats()
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("scraped\n%s\nstats\n%s", gotJSON, wantJSON)
	}
	if want.Stations["records"].Requests["rejected"] == 0 && want.StoredWrites == 0 {
		t.Errorf("nothing happened: %s", wantJSON)
	}
	if _, err := (api.Client{BaseURL: url + "/healthz", HTTP: http.DefaultClient}).Scrape(context.Background()); err == nil {
		t.Error("scraping a non-metrics page succeeded")
	}
}

// Back-to-back service on one worker does not accumulate timer slack: a
// queued request starts when its predecessor was planned to end, not when
// the worker's timer happened to wake. By the server's own log, each of 20
// writes queued at once starts exactly 10 ms (its planned service) after
// the one before, wherever it waited in the queue; and none ends before
// its planned end. Real time: the slack is the subject. A late timer or a
// stall of the machine moves when a request ends, never when the next one
// was planned to start, so the exact equality holds on any host; slack
// that accumulated would break it at the first late timer.
func TestBusyWorkerDoesNotDrift(t *testing.T) {
	const service = 10 * time.Millisecond
	url, _ := startService(t, oneWorker(service, false))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", url+"/records", strings.NewReader(writeBody(fmt.Sprint("d", i))))
			req.Header.Set(api.HeaderRequestID, fmt.Sprint("d", i))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	_, body := do(t, "GET", url+"/admin/requests", "", "")
	var snap api.RequestLogSnapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil || len(snap.Entries) != 20 {
		t.Fatalf("%v: %s", err, body)
	}
	entries := snap.Entries
	slices.SortFunc(entries, func(a, b api.RequestEntry) int { return a.Started.Compare(*b.Started) })
	queued := 0
	for i, e := range entries {
		if e.Finished.Before(e.Started.Add(service)) {
			t.Errorf("%s: served %v, shorter than its planned %v", e.ID, e.Finished.Sub(*e.Started), service)
		}
		if i == 0 {
			continue
		}
		prevEnd := entries[i-1].Started.Add(service)
		if e.Arrived.After(prevEnd) {
			// Arrived to an idle worker (a client slower than the queue
			// drained): it starts on arrival, after the planned end.
			if e.Started.Before(prevEnd) {
				t.Errorf("%s arrived to an idle worker and started %v before %s's planned end", e.ID, prevEnd.Sub(*e.Started), entries[i-1].ID)
			}
			continue
		}
		queued++
		if !e.Started.Equal(prevEnd) {
			t.Errorf("%s waited in the queue and started %v after %s's planned end, want exactly at it", e.ID, e.Started.Sub(prevEnd), entries[i-1].ID)
		}
	}
	if queued < 10 {
		t.Errorf("only %d of 19 writes waited in the queue: too few to tell drift", queued)
	}
	t.Logf("%d of 19 queued; first start to last finish %v for 20 × %v", queued, entries[19].Finished.Sub(*entries[0].Started), service)
}

func TestRequestLog(t *testing.T) {
	cfg := oneWorker(30*time.Millisecond, false)
	cfg.Records.Queue = 0
	cfg.AdminToken = "tok"
	url, svc := startService(t, cfg)
	send := func(id string) {
		req, _ := http.NewRequest("POST", url+"/records", strings.NewReader(writeBody(id)))
		req.Header.Set(api.HeaderRequestID, id)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { send("first") })
	waitFor(t, "first write in service", func() bool { return svc.Stats().Stations[api.Records].Busy == 1 })
	send("refused") // one worker, no queue
	wg.Wait()
	send("") // not logged
	code, body := do(t, "GET", url+"/admin/requests", "tok", "")
	var snap api.RequestLogSnapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil || code != 200 {
		t.Fatalf("%d %s %v", code, body, err)
	}
	if len(snap.Entries) != 2 {
		t.Fatalf("entries %+v, want 2", snap.Entries)
	}
	byID := map[string]api.RequestEntry{}
	for _, e := range snap.Entries {
		byID[e.ID] = e
	}
	f, r := byID["first"], byID["refused"]
	if f.Outcome != api.OutcomeServed || f.Started == nil || f.Finished == nil || f.Finished.Sub(*f.Started) < 29*time.Millisecond {
		t.Errorf("first: %+v", f)
	}
	if r.Outcome != api.OutcomeRejected || r.Started != nil {
		t.Errorf("refused: %+v", r)
	}
	if code, _ := do(t, "POST", url+"/admin/reset", "tok", ""); code != 200 {
		t.Fatal(code)
	}
	_, body = do(t, "GET", url+"/admin/requests", "tok", "")
	if !strings.Contains(body, `"entries":[]`) {
		t.Errorf("after reset: %s", body)
	}
}

// Each built-in profile's service times, drawn as the stations draw them
// (seeded Mulberry32), have the configured median within 5%.
func TestProfileMedians(t *testing.T) {
	cfg := config.Default()
	ms := time.Millisecond
	// slow-enrichment: 5% hang, so the median is the log-normal's 0.5/0.95
	// quantile: 1.2 s × exp(0.3 × z(0.526)).
	slowEnrich := time.Duration(1200 * float64(ms) * math.Exp(0.3*math.Sqrt2*math.Erfinv(2*0.5/0.95-1)))
	tests := []struct {
		profile, station string
		want             time.Duration
	}{
		{"healthy", "enrichment", 120 * ms},
		{"healthy", "records", 30 * ms},
		{"slow-enrichment", "enrichment", slowEnrich},
		{"slow-enrichment", "records", 30 * ms},
		{"slow-write", "enrichment", 120 * ms},
		{"slow-write", "records", 150 * ms},
	}
	for _, tt := range tests {
		p := cfg.Profiles[tt.profile]
		spec := p.Enrichment
		if tt.station == "records" {
			spec = p.Records
		}
		d, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		src := latency.NewMulberry32(cfg.Seed)
		xs := make([]time.Duration, 20001)
		for i := range xs {
			xs[i] = d.Sample(src)
		}
		slices.Sort(xs)
		if got := xs[len(xs)/2]; math.Abs(float64(got-tt.want))/float64(tt.want) > 0.05 {
			t.Errorf("%s %s: median %v, want %v within 5%%", tt.profile, tt.station, got, tt.want)
		}
	}
}
