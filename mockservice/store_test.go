package mockservice_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

func TestWritesAreStoredOnce(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.01
	url, svc := startService(t, cfg)
	c := &http.Client{Timeout: 5 * time.Second}
	for i, want := range []int{http.StatusCreated, http.StatusOK, http.StatusOK} {
		if r := post(c, url+"/records", writeBody("same")); r.status != want {
			t.Errorf("write %d: status %d, want %d", i, r.status, want)
		}
	}
	if st := svc.Stats(); st.StoredWrites != 1 || st.DuplicateWrites != 2 {
		t.Errorf("stored %d, duplicates %d; want 1, 2", st.StoredWrites, st.DuplicateWrites)
	}
}

// 50 concurrent writes of one id, all in service at once and finishing
// together, store it exactly once: one 201, 49 duplicates (200,
// "duplicate": true), as the admin stats say too.
// On a fake clock over the in-memory wire: "at once" is then exactly at
// once, not as close as a busy machine's scheduler lets 50 writes be.
func TestConcurrentWritesOfOneIDAreStoredOnce(t *testing.T) {
	synctest.Test(t, testConcurrentWritesOfOneID)
}

func testConcurrentWritesOfOneID(t *testing.T) {
	const n = 50
	m := mocktest.Start(t, mocktest.Options{Config: writes(n, 0, 20*time.Millisecond), InMemory: true})
	addr := strings.TrimPrefix(m.URL, "http://")
	// Connections first, then every write at once, so that the writes
	// arrive, and finish, as close together as the server lets them.
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := m.Dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(5 * time.Second))
		conns[i] = c
	}
	body := writeBody("one")
	request := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		api.PathRecords, addr, len(body), body)
	for _, c := range conns {
		if _, err := io.WriteString(c, request); err != nil {
			t.Fatal(err)
		}
	}
	var created, duplicates int
	for i, c := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		var answer struct{ Duplicate bool }
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		switch {
		case err != nil:
			t.Errorf("write %d: %s: %v", i, resp.Status, err)
		case resp.StatusCode == http.StatusCreated && !answer.Duplicate:
			created++
		case resp.StatusCode == http.StatusOK && answer.Duplicate:
			duplicates++
		default:
			t.Errorf("write %d: %s, duplicate %v", i, resp.Status, answer.Duplicate)
		}
	}
	st, err := m.Client.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || duplicates != n-1 || st.StoredWrites != 1 || st.DuplicateWrites != n-1 {
		t.Errorf("%d created, %d duplicates; stats: stored_writes %d, duplicate_writes %d; want 1, %d, 1, %d",
			created, duplicates, st.StoredWrites, st.DuplicateWrites, n-1, n-1)
	}
	if busy := st.Stations[api.Records].HighWater.Busy; busy != n {
		t.Errorf("at most %d writes in service at once; want all %d", busy, n)
	}
}

// GET /records/{id} answers whether the system of record stored a write:
// 200 with the record, 404 when absent or written before the last reset;
// with a token configured it is an admin route.
func TestRecordLookup(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.01
	cfg.AdminToken = "s3cret"
	url, _ := startService(t, cfg)
	c := &http.Client{Timeout: 5 * time.Second}
	if r := post(c, url+"/records", `{"id":"a/b 1","complete":false}`); r.status != http.StatusCreated {
		t.Fatalf("write: %d", r.status)
	}
	if code, _ := do(t, "GET", url+"/records/a%2Fb%201", "", ""); code != http.StatusUnauthorized {
		t.Errorf("lookup without the token: %d, want 401", code)
	}
	mock := api.Client{BaseURL: url, Token: "s3cret"}
	ctx := context.Background()
	rec, ok, err := mock.Record(ctx, "a/b 1")
	if err != nil || !ok || rec != (api.StoredRecord{ID: "a/b 1", Complete: false}) {
		t.Errorf("stored record: %+v %v %v", rec, ok, err)
	}
	if _, ok, err := mock.Record(ctx, "never"); err != nil || ok {
		t.Errorf("absent record: found %v, err %v; want 404", ok, err)
	}
	if err := mock.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := mock.Record(ctx, "a/b 1"); err != nil || ok {
		t.Errorf("record after reset: found %v, err %v; want 404", ok, err)
	}
}

// POST /admin/reset with {"seed": N} re-seeds both stations (records with
// RecordsSeed(N)): the same seed draws the same service times, another seed others;
// the scrape carries the seed, the draws and their sum.
func TestResetWithSeed(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.01
	url, _ := startService(t, cfg)
	mock := api.Client{BaseURL: url}
	ctx := context.Background()
	c := &http.Client{Timeout: 5 * time.Second}
	drawn := func(seed uint32) api.Stats {
		t.Helper()
		if err := mock.ResetSeed(ctx, seed); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			post(c, url+"/enrich", fmt.Sprintf(`{"record_id":"r%d","step":1}`, i))
			post(c, url+"/records", writeBody(fmt.Sprint(i)))
		}
		st, err := mock.Scrape(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b, other := drawn(41), drawn(41), drawn(42)
	for _, name := range api.Stations {
		sa, sb, so := a.Stations[name], b.Stations[name], other.Stations[name]
		if sa.Draws != 5 || sb.Draws != 5 || so.Draws != 5 {
			t.Fatalf("%s: draws %d %d %d, want 5 each", name, sa.Draws, sb.Draws, so.Draws)
		}
		if sa.PlannedLabSeconds != sb.PlannedLabSeconds {
			t.Errorf("%s: seed 41 drew %v s then %v s", name, sa.PlannedLabSeconds, sb.PlannedLabSeconds)
		}
		// The healthy system of record's service time is fixed; the
		// enrichment API's is log-normal.
		if name == api.Enrichment && sa.PlannedLabSeconds == so.PlannedLabSeconds {
			t.Errorf("%s: seeds 41 and 42 both drew %v s", name, sa.PlannedLabSeconds)
		}
	}
	if a.Seed != 41 || other.Seed != 42 {
		t.Errorf("scraped seeds %d, %d; want 41, 42", a.Seed, other.Seed)
	}
	if err := mock.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := mock.Stats(ctx); st.Seed != cfg.Seed {
		t.Errorf("seed after a reset without one: %d, want the configured %d", st.Seed, cfg.Seed)
	}
	if code, body := do(t, "POST", url+"/admin/reset", "", `{"seed":-1}`); code != http.StatusBadRequest {
		t.Errorf("negative seed: %d %s, want 400", code, body)
	}
}

// Replay mode: X-Loadlab-Replay-Ms sets a request's service time (lab
// time, times the time scale); without replay mode, or with a bad value,
// the header is refused (400). X-Loadlab-Replay-Seq admits requests in
// their number's order: one numbered 1 waits for 0 (at most 100 ms).
func TestReplayMode(t *testing.T) {
	send := func(url, ms, seq string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, url+"/enrich", strings.NewReader(`{"record_id":"r","step":1}`))
		req.Header.Set(api.HeaderReplay, ms)
		if seq != "" {
			req.Header.Set(api.HeaderReplaySeq, seq)
			req.Header.Set(api.HeaderRequestID, "seq"+seq)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	plain, _ := startService(t, config.Default())
	if code, _ := send(plain, "40", ""); code != http.StatusBadRequest {
		t.Errorf("replay header without replay mode: %d, want 400", code)
	}
	cfg := config.Default()
	cfg.Replay, cfg.TimeScale = true, 0.5
	url, svc := startService(t, cfg)
	code, h := send(url, "40", "")
	ms, _ := strconv.ParseFloat(h.Get(api.HeaderService), 64)
	if code != http.StatusOK || ms < 19.9 || ms > 30 {
		t.Errorf("replayed 40 ms at time scale 0.5: %d, service %v ms; want 200 and 20 ms", code, ms)
	}
	for _, bad := range []string{"-1", "x", "1e12", "1e13", "Inf", "1e300", "NaN"} {
		if code, _ := send(url, bad, ""); code != http.StatusBadRequest {
			t.Errorf("replay %q: %d, want 400", bad, code)
		}
	}
	svc.Reset()
	done := make(chan struct{})
	go func() { send(url, "0", "1"); close(done) }()
	time.Sleep(30 * time.Millisecond) // number 1 is waiting for number 0
	send(url, "0", "0")
	<-done
	snap, err := (api.Client{BaseURL: url}).RequestLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Entries) != 2 || snap.Entries[0].ID != "seq0" || snap.Entries[1].ID != "seq1" {
		t.Errorf("admitted %+v; want seq0 then seq1", snap.Entries)
	}
	start := time.Now()
	send(url, "0", "5") // 2..4 never come: admitted after the wait limit
	if el := time.Since(start); el < 90*time.Millisecond || el > time.Second {
		t.Errorf("a number whose predecessors never come waited %v; want about 100 ms", el)
	}
}
