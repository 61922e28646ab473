package mockservice_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
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
func TestConcurrentWritesOfOneIDAreStoredOnce(t *testing.T) {
	const n = 50
	m := mocktest.Start(t, writes(n, 0, 20*time.Millisecond))
	addr := strings.TrimPrefix(m.URL, "http://")
	// Connections first, then every write at once, so that the writes
	// arrive, and finish, as close together as the server lets them.
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
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
