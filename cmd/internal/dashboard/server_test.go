package dashboard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A port alone, or with an empty host, is served on loopback only.
func TestAPortAloneIsLoopback(t *testing.T) {
	for _, addr := range []string{":0", "0"} {
		s := New("run", "t")
		url, err := s.Start(addr)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("--ui %s serves %s, not loopback", addr, url)
		}
		s.Close()
	}
}

// A browser that stops reading never holds the work up: the states it
// has not read are replaced by newer ones and counted, while a browser
// that reads gets the newest state.
func TestASlowBrowserNeverBlocksTheWork(t *testing.T) {
	s := New("load", "t")
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	stuck, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	fmt.Fprintf(stuck, "GET /events HTTP/1.1\r\nHost: %s\r\n\r\n", host) // and never read
	// Each state ~40 KB: 3,000 of them fill any socket buffer.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3000 {
			s.Update(func(st *State) {
				c := st.Chart("big", func() *Chart { return &Chart{Labels: []string{"x", "y"}} })
				for len(c.Rows) < MaxRows {
					c.Add(float64(i), float64(i))
				}
				c.Rows[0][1] = float64(i)
			})
			s.push()
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the work was held up by a browser that does not read")
	}
	if d := s.Snapshot().Dropped; d == 0 {
		t.Error("no state was dropped for the browser that does not read: was the socket buffer that large?")
	}
	resp, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReaderSize(resp.Body, 1<<20).ReadString('\n')
	var st State
	if err != nil || json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &st) != nil || st.Charts[0].Rows[0][1] != 2999 {
		t.Errorf("a reading browser's first state: %v, %.100q", err, line)
	}
}
