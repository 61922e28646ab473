package mockservice_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
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

// slowlorisFigures is what one slowloris run measured: when each
// connection was closed, counted from its dial.
type slowlorisFigures struct {
	closed []time.Duration // sorted
	// A connection closed at the timeout gets no answer, or net/http's own
	// "400 Bad Request" when the timeout cut a header line short.
	answered400   int
	answered      int     // connections answered anything else
	firstAnswer   string  // the first of those answers
	stillOpen     int     // connections not closed by the deadline
	busy, offered int     // the stations' high-water marks
	requests      float64 // requests that reached a station
}

// slowloris opens conns connections that send a request's headers a byte
// every 10 ms and never finish them, against a service whose read-header
// timeout is timeout, and waits for the service to close every one.
func slowloris(t *testing.T, conns int, timeout time.Duration) slowlorisFigures {
	t.Helper()
	cfg := config.Default()
	cfg.ReadHeaderTimeout = timeout
	url, svc := startService(t, cfg)
	addr := strings.TrimPrefix(url, "http://")
	closed := make([]time.Duration, conns)
	got := make([]string, conns)
	var wg sync.WaitGroup
	for i := range conns {
		dialled := time.Now() // before the service accepts, so it cannot close earlier than its timeout after this
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Bounded: the service must close it well before this.
		c.SetDeadline(dialled.Add(timeout + 5*time.Second))
		wg.Go(func() { // the slow client: headers that never end
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nX-Slow: ", api.PathRecords, addr)
			for k := 0; ; k++ {
				b := byte('a')
				if k < len(head) {
					b = head[k]
				}
				if _, err := c.Write([]byte{b}); err != nil {
					return // closed by the service
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		wg.Go(func() { // its reader: when does the service close it?
			b, _ := io.ReadAll(c)
			closed[i], got[i] = time.Since(dialled), string(b)
		})
	}
	wg.Wait()
	var f slowlorisFigures
	for i := range conns {
		if closed[i] >= timeout+5*time.Second {
			f.stillOpen++
		}
		switch {
		case got[i] == "":
		case strings.HasPrefix(got[i], "HTTP/1.1 400 "):
			f.answered400++
		default:
			f.answered++
			if f.answered == 1 {
				f.firstAnswer = got[i]
			}
		}
	}
	f.closed = closed
	slices.Sort(f.closed)
	for _, name := range api.Stations {
		st := svc.Stats().Stations[name]
		f.busy = max(f.busy, st.HighWater.Busy)
		f.offered = max(f.offered, st.HighWater.Offered)
		for _, n := range st.Requests {
			f.requests += n
		}
	}
	return f
}

func (f slowlorisFigures) check(t *testing.T, timeout, slack time.Duration) {
	t.Helper()
	first, median, last := f.closed[0], f.closed[len(f.closed)/2], f.closed[len(f.closed)-1]
	if f.stillOpen > 0 || first < timeout || last > timeout+slack {
		t.Errorf("%d connections closed after %v … %v (%d still open); want all at the read-header timeout %v (+%v)",
			len(f.closed), first, last, f.stillOpen, timeout, slack)
	}
	if f.answered > 0 || f.busy > 0 || f.offered > 0 || f.requests > 0 {
		t.Errorf("%d connections answered other than 400 (first %q), %v requests reached a station, high water %d busy, %d offered; want none",
			f.answered, f.firstAnswer, f.requests, f.busy, f.offered)
	}
	t.Logf("%d slowloris connections closed after %v (first), %v (median), %v (last) at a read-header timeout of %v; "+
		"%d unanswered, %d answered 400 by net/http, %d otherwise; %v requests at a station, %d workers taken",
		len(f.closed), first.Round(time.Millisecond), median.Round(time.Millisecond), last.Round(time.Millisecond),
		timeout, len(f.closed)-f.answered400-f.answered, f.answered400, f.answered, f.requests, f.busy)
}

// Real network, since slow clients are the subject: 200 connections that
// send headers a byte at a time are closed at the read-header timeout
// (300 ms here), unanswered, without their requests ever reaching a
// station.
func TestSlowlorisIsClosedAtTheReadHeaderTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	slowloris(t, 200, timeout).check(t, timeout, 250*time.Millisecond)
}

// The slowloris run the README quotes, at the default read-header timeout
// (5 s). Not part of make test; run by hand with
//
//	LOADLAB_LONG=1 go test -run TestSlowlorisLong -v ./mockservice
func TestSlowlorisLong(t *testing.T) {
	if os.Getenv("LOADLAB_LONG") == "" {
		t.Skip("set LOADLAB_LONG=1 to run (5 s)")
	}
	slowloris(t, 200, config.DefaultReadHeaderTimeout).check(t, config.DefaultReadHeaderTimeout, time.Second)
}
