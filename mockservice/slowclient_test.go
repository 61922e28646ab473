package mockservice_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// writes is the default service with a records station of the given shape
// and fixed writes of d.
func writes(workers, queue int, d time.Duration) config.Config {
	cfg := config.Default()
	cfg.Records = config.Station{Workers: workers, Queue: queue, RejectStatus: config.DefaultRejectStatus}
	p := cfg.Profiles[cfg.Profile]
	p.Records = latency.Spec{Kind: "fixed", Value: d}
	cfg.Profiles[cfg.Profile] = p
	return cfg
}

// Real network, since a slow client is the subject. A request whose body
// trickles in holds no worker and is not offered concurrency; once its body
// is complete it is. 20 bodies sent a byte at a time leave the offered
// high-water mark at 0; completed together, they are 20 concurrent writes.
func TestSlowBodiesAreNotOffered(t *testing.T) {
	const n = 20
	const service = 200 * time.Millisecond
	url, svc := startService(t, writes(n, 0, service))
	addr := strings.TrimPrefix(url, "http://")
	conns := make([]net.Conn, n)
	bodies := make([]string, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		conns[i], bodies[i] = c, writeBody(fmt.Sprint("slow", i))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			api.PathRecords, addr, len(bodies[i]))
	}
	offered := func() (now, high int) {
		st := svc.Stats().Stations[api.Records]
		return st.Offered, st.HighWater.Offered
	}
	// Half of each body, a byte every 20 ms: the handlers have started and
	// are reading.
	sent := len(bodies[0]) / 2
	for k := range sent {
		for i, c := range conns {
			if _, err := c.Write([]byte{bodies[i][k]}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		if now, high := offered(); now != 0 || high != 0 {
			t.Fatalf("after %d of %d body bytes: offered %d (high water %d); want 0 while bodies are incomplete", k+1, len(bodies[0]), now, high)
		}
	}
	for i, c := range conns {
		if _, err := c.Write([]byte(bodies[i][sent:])); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("write %d: %s, want 201", i, resp.Status)
		}
	}
	if now, high := offered(); now != 0 || high != n {
		t.Errorf("after the writes: offered %d, high water %d; want 0 and %d", now, high, n)
	}
}
