package mockservice_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/config"

	"github.com/loadlab/loadlab/mockservice"
)

// FuzzRoutes: no body on any route makes the service panic or answer 5xx
// other than a refusal.
func FuzzRoutes(f *testing.F) {
	for _, s := range []string{`{"record_id":"a","step":1}`, `{"id":"a","complete":true}`, `{"profile":"slow-write"}`,
		`{`, `null`, `[]`, `{"id":""}`, `{"step":-1,"record_id":"x"}`, "\x00\xff", `{"a":1}{"b":2}`} {
		f.Add(s)
	}
	cfg := config.Default()
	cfg.TimeScale = 0.0001
	svc, err := mockservice.New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	h := svc.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, route := range []struct{ method, path string }{
			{"POST", "/enrich"}, {"POST", "/records"}, {"PUT", "/admin/profile"},
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(route.method, route.path, strings.NewReader(body)))
			if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
				t.Errorf("%s %s %q: status %d", route.method, route.path, body, rec.Code)
			}
		}
	})
}
