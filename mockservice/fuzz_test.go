package mockservice_test

import (
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// routes lists every route of the service, as method and path.
var routes = []struct{ method, path string }{
	{http.MethodPost, api.PathEnrich},
	{http.MethodPost, api.PathRecords},
	{http.MethodOptions, api.PathEnrich},
	{http.MethodOptions, api.PathRecords},
	{http.MethodGet, api.PathHealthz},
	{http.MethodGet, api.PathMetrics},
	{http.MethodGet, api.PathAdminProfile},
	{http.MethodPut, api.PathAdminProfile},
	{http.MethodPost, api.PathAdminReset},
	{http.MethodGet, api.PathAdminStats},
	{http.MethodGet, api.PathAdminRequests},
}

// FuzzRoutes sends each body to every route of the real service on
// loopback: none makes it panic (net/http would log the recovered panic and
// close the connection) or answer a 5xx other than a refusal. The seed
// corpus runs in go test; go test -fuzz FuzzRoutes ./mockservice explores.
func FuzzRoutes(f *testing.F) {
	for _, s := range []string{`{"record_id":"a","step":1}`, `{"id":"a","complete":true}`, `{"profile":"slow-write"}`,
		`{"profile":"slow-enrichment"}`, `{"profile":"healthy"}`, `{`, `null`, `[]`, `{"id":""}`, `{"step":-1,"record_id":"x"}`,
		`{"record_id":"a","step":1e99}`, `{"id":"a","complete":null}`, "\x00\xff", `{"a":1}{"b":2}`, ``,
		strings.Repeat(`{"a":`, 10000)} {
		f.Add(s)
	}
	logged := &syncBuffer{}
	prev := log.Writer()
	log.SetOutput(logged)
	f.Cleanup(func() { log.SetOutput(prev) })
	cfg := config.Default()
	cfg.TimeScale = api.MinTimeScale // slow-enrichment's 8 s hang takes 0.8 ms
	m := mocktest.Start(f, mocktest.Options{Config: cfg})
	client := &http.Client{Timeout: 5 * time.Second}
	f.Fuzz(func(t *testing.T, body string) {
		for _, r := range routes {
			req, err := http.NewRequest(r.method, m.URL+r.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("%s %s %q: %v", r.method, r.path, body, err)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 && !api.Rejected(resp.StatusCode) {
				t.Errorf("%s %s %q: status %d", r.method, r.path, body, resp.StatusCode)
			}
		}
		if strings.Contains(logged.String(), "panic") {
			t.Fatalf("the service panicked on %q:\n%s", body, logged.String())
		}
	})
}
