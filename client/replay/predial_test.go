package replay

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/transport"
)

// The connections predial opens before the clock starts are the ones k
// requests sent at once use: the server accepts k connections in all, all
// of them before the first request, and the requests open none.
func TestPredialServesRequestsSentAtOnce(t *testing.T) {
	const k = 8
	var accepted atomic.Int32
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(k)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release // hold every request until all k are in, so each needs its own connection
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	hc := transport.New(k)
	defer hc.CloseIdleConnections()
	if err := predial(context.Background(), hc, srv.URL, k, nil); err != nil {
		t.Fatal(err)
	}
	// Accepted is counted when the server's loop takes the connection;
	// give it the dialled ones before any request goes.
	for end := time.Now().Add(5 * time.Second); accepted.Load() < k; runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("the server accepted %d connections after predial(%d)", accepted.Load(), k)
		}
	}
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	if n := accepted.Load(); n != k {
		t.Errorf("the server accepted %d connections for %d requests sent at once after predial(%d)", n, k, k)
	}
}

func TestPredialReportsAnUnreachableTarget(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if err := predial(context.Background(), transport.New(2), "http://"+addr, 2, nil); err == nil {
		t.Fatalf("predial to closed %s: no error", addr)
	}
}
