package api_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// A target that accepts connections and never answers cannot hold a
// Client's call past its timeout, whatever the caller's context.
func TestClientCallsAreBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	c := api.Client{BaseURL: "http://" + ln.Addr().String(), Timeout: 50 * time.Millisecond}
	calls := map[string]func() error{
		"healthy":     func() error { return c.Healthy(context.Background()) },
		"answers":     func() error { return c.Answers(context.Background()) },
		"reset":       func() error { return c.Reset(context.Background()) },
		"set profile": func() error { return c.SetProfile(context.Background(), "healthy") },
		"stats":       func() error { _, err := c.Stats(context.Background()); return err },
		"request log": func() error { _, err := c.RequestLog(context.Background()); return err },
		"scrape":      func() error { _, err := c.Scrape(context.Background()); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want a deadline error", name, err)
		}
		// The bound is 50 ms; 5 s would mean it did not apply.
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%s took %v", name, el)
		}
	}
}

// The admin token goes with every call, and a non-200 answer is an error
// that quotes the answer.
func TestClientSendsTheTokenAndReportsRefusals(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.URL.Path == api.PathAdminProfile {
			http.Error(w, `{"error":"unknown profile"}`, http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := api.Client{BaseURL: srv.URL + "/", Token: "tok"}
	if err := c.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := c.SetProfile(context.Background(), "nope")
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "unknown profile") {
		t.Errorf("set profile: %v, want the 400 and its message", err)
	}
	want := []string{"POST /admin/reset Bearer tok", "PUT /admin/profile Bearer tok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", got, want)
	}
	if _, err := c.Scrape(context.Background()); err == nil || !strings.Contains(err.Error(), "not a loadlab mock service") {
		t.Errorf("scrape of a foreign target: %v", err)
	}
}

func TestCheckTimeScale(t *testing.T) {
	for _, v := range []float64{api.MinTimeScale, 0.1, 1, api.MaxTimeScale} {
		if err := api.CheckTimeScale(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	for _, v := range []float64{0, -1, api.MinTimeScale / 2, api.MaxTimeScale * 2} {
		if err := api.CheckTimeScale(v); err == nil {
			t.Errorf("%v accepted", v)
		}
	}
}

func TestRejected(t *testing.T) {
	for status, want := range map[int]bool{503: true, 429: true, 200: false, 500: false, 404: false} {
		if api.Rejected(status) != want {
			t.Errorf("Rejected(%d) = %v", status, !want)
		}
	}
}

// Identify asks with OPTIONS on the given load path only, and tells a
// loadlab mock (name and time scale in its headers) from anything else.
func TestIdentify(t *testing.T) {
	var asked []string
	mock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Method+" "+r.URL.Path)
		w.Header().Set(api.HeaderMock, api.ServiceName+"/v9")
		w.Header().Set(api.HeaderTimeScale, "0.1")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer mock.Close()
	id, err := (api.Client{BaseURL: mock.URL}).Identify(context.Background(), api.PathEnrich)
	if err != nil || id.Version != "v9" || id.TimeScale != 0.1 {
		t.Errorf("mock: %+v, %v", id, err)
	}
	if len(asked) != 1 || asked[0] != "OPTIONS /enrich" {
		t.Errorf("asked %q, want only OPTIONS /enrich", asked)
	}
	for name, h := range map[string]http.HandlerFunc{
		"foreign": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) },
		"another service": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(api.HeaderMock, "someone-else/1")
		},
		"bad time scale": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(api.HeaderMock, api.ServiceName+"/1")
			w.Header().Set(api.HeaderTimeScale, "fast")
		},
	} {
		srv := httptest.NewServer(h)
		if _, err := (api.Client{BaseURL: srv.URL}).Identify(context.Background(), "/x"); !errors.Is(err, api.ErrNotMock) {
			t.Errorf("%s: %v, want ErrNotMock", name, err)
		}
		srv.Close()
	}
}
