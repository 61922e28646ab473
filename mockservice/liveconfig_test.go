package mockservice_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

func patchConfig(t *testing.T, hc *http.Client, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, url+api.PathAdminConfig, strings.NewReader(body))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// liveWrites sends n writes at once and counts the answers by status.
func liveWrites(t *testing.T, hc *http.Client, url string, n int, tag string) map[int]int {
	t.Helper()
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Post(url+api.PathRecords, "application/json", strings.NewReader(fmt.Sprintf(`{"id":"%s-%d","complete":true}`, tag, i)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			got[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// PATCH /admin/config changes the system of record live: 2 workers and 2
// queue slots serve 4 of 5 writes sent at once and refuse one with the
// patched status; more workers take queued requests at once; a service
// patch changes one field of the distribution; a bad patch is refused
// whole, naming the field; a profile switch restores the profile's
// service times.
func TestPatchLiveConfig(t *testing.T) {
	// On a fake clock over the in-memory wire: it times a queue's drain and
	// reads a service time, which a stall of the machine would stretch.
	synctest.Test(t, testPatchLiveConfig)
}

func testPatchLiveConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowWrite // 150 ms writes
	m := mocktest.Start(t, mocktest.Options{Config: cfg, InMemory: true})
	if code, body := patchConfig(t, m.HTTP, m.URL, `{"records": {"workers": 2, "queue": 2, "reject_status": 429}}`); code != 200 || !strings.Contains(body, `"workers":2`) {
		t.Fatalf("patch: %d %s", code, body)
	}
	st, _ := m.Client.Stats(context.Background())
	if r := st.Stations[api.Records]; r.Workers != 2 || r.QueueCapacity != 2 {
		t.Fatalf("stats after the patch: %+v", r)
	}
	if got := liveWrites(t, m.HTTP, m.URL, 5, "a"); got[201] != 4 || got[429] != 1 {
		t.Errorf("5 writes at once on 2 workers + 2 slots: %v, want 4 × 201 and 1 × 429", got)
	}
	// One worker, six queued; then six workers: the queue drains at once.
	patchConfig(t, m.HTTP, m.URL, `{"records": {"workers": 1, "queue": 10}}`)
	m.Client.Reset(context.Background())
	start := time.Now()
	done := make(chan map[int]int)
	go func() { done <- liveWrites(t, m.HTTP, m.URL, 6, "b") }()
	time.Sleep(50 * time.Millisecond)
	if code, body := patchConfig(t, m.HTTP, m.URL, `{"records": {"workers": 6}}`); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	got := <-done
	took := time.Since(start)
	st, _ = m.Client.Stats(context.Background())
	if got[201] != 6 || st.Stations[api.Records].HighWater.Busy != 6 || took != 200*time.Millisecond {
		t.Errorf("6 writes, workers 1 → 6 after 50 ms: %v, busy high-water %d, %v (the first write 150 ms, the five queued from the patch at 50 ms: 200 ms; one worker would take 900 ms)", got, st.Stations[api.Records].HighWater.Busy, took)
	}
	// A service patch merges into the current distribution (fixed 150 ms).
	if code, body := patchConfig(t, m.HTTP, m.URL, `{"records": {"service": {"value": "20ms"}}}`); code != 200 || !strings.Contains(body, `"value":"20ms"`) || !strings.Contains(body, `"kind":"fixed"`) {
		t.Fatalf("service patch: %d %s", code, body)
	}
	resp, err := m.HTTP.Post(m.URL+api.PathRecords, "application/json", strings.NewReader(`{"id":"c","complete":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := resp.Header.Get(api.HeaderService); s != "20.000" && s != "20" {
		t.Errorf("service time after the patch: %s ms, want 20", s)
	}
	for _, c := range []struct{ body, want string }{
		{`{"records": {"workers": 0}}`, "records.workers: 0 must be ≥ 1"},
		{`{"records": {"wat": 1}}`, "records.wat: unknown setting"},
		{`{"records": {"service": {"hang_probability": 2}}}`, "records.service.hang_probability"},
		{`{"records": {"reject_status": 500}}`, "records.reject_status: 500 must be 503 or 429"},
		{`{"enrichment": {"workers": 10}, "records": {"queue": -2}}`, "records.queue"},
		{`not yaml: [`, "body: "},
	} {
		if code, body := patchConfig(t, m.HTTP, m.URL, c.body); code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want 400 naming %q", c.body, code, body, c.want)
		}
	}
	if st, _ := m.Client.Stats(context.Background()); st.Stations[api.Enrichment].Workers != config.DefaultEnrichmentWorkers {
		t.Errorf("a refused patch changed enrichment's workers to %d", st.Stations[api.Enrichment].Workers)
	}
	if err := m.Client.SetProfile(context.Background(), config.ProfileSlowWrite); err != nil {
		t.Fatal(err)
	}
	if _, body := patchConfig(t, m.HTTP, m.URL, `{}`); !strings.Contains(body, `"value":"150ms"`) {
		t.Errorf("after a profile switch: %s, want the profile's 150ms", body)
	}
}
