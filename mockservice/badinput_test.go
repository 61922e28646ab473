package mockservice_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Bad input on every route, admin routes included, is answered with a 4xx
// (400 and 413 with a JSON error) and never makes the service panic: net/http
// recovers a handler's panic and logs it, so the log is watched too. Bad
// input never reaches a station.
func TestBadInput(t *testing.T) {
	logged := &syncBuffer{} // net/http logs a recovered panic to the standard logger
	prev := log.Writer()
	log.SetOutput(logged)
	t.Cleanup(func() { log.SetOutput(prev) })

	cfg := config.Default()
	cfg.TimeScale = 0.01
	cfg.AdminToken = "tok"
	url, svc := startService(t, cfg)
	big := `{"id":"` + strings.Repeat("x", api.MaxBodyBytes) + `","complete":true}`
	longID := strings.Repeat("i", api.MaxRequestIDBytes+1)
	const enrichOK, writeOK = `{"record_id":"a","step":1}`, `{"id":"a","complete":true}`
	tests := []struct {
		name, method, path string
		token              string // the Authorization bearer token, if any
		id                 string // X-Request-Id, if any
		body               string
		want               int
	}{
		{"records: malformed JSON", "POST", api.PathRecords, "", "", `{"id":`, 400},
		{"records: trailing data", "POST", api.PathRecords, "", "", writeOK + ` {}`, 400},
		{"records: two objects", "POST", api.PathRecords, "", "", writeOK + writeOK, 400},
		{"records: missing id", "POST", api.PathRecords, "", "", `{"complete":true}`, 400},
		{"records: empty id", "POST", api.PathRecords, "", "", `{"id":"","complete":true}`, 400},
		{"records: missing complete", "POST", api.PathRecords, "", "", `{"id":"a"}`, 400},
		{"records: complete not a bool", "POST", api.PathRecords, "", "", `{"id":"a","complete":"yes"}`, 400},
		{"records: null", "POST", api.PathRecords, "", "", `null`, 400},
		{"records: array", "POST", api.PathRecords, "", "", `[]`, 400},
		{"records: empty body", "POST", api.PathRecords, "", "", ``, 400},
		{"records: not UTF-8", "POST", api.PathRecords, "", "", "\xff\xfe", 400},
		{"records: body too large", "POST", api.PathRecords, "", "", big, 413},
		{"records: request id too long", "POST", api.PathRecords, "", longID, writeOK, 400},
		{"records: wrong method", "GET", api.PathRecords, "", "", "", 405},
		{"enrich: wrong type", "POST", api.PathEnrich, "", "", `{"record_id":5,"step":1}`, 400},
		{"enrich: missing record_id", "POST", api.PathEnrich, "", "", `{"step":1}`, 400},
		{"enrich: missing step", "POST", api.PathEnrich, "", "", `{"record_id":"a"}`, 400},
		{"enrich: step 0", "POST", api.PathEnrich, "", "", `{"record_id":"a","step":0}`, 400},
		{"enrich: step too big for an int", "POST", api.PathEnrich, "", "", `{"record_id":"a","step":1e99}`, 400},
		{"enrich: malformed JSON", "POST", api.PathEnrich, "", "", `{"record_id"`, 400},
		{"enrich: body too large", "POST", api.PathEnrich, "", "", big, 413},
		{"enrich: request id too long", "POST", api.PathEnrich, "", longID, enrichOK, 400},
		{"enrich: wrong method", "PUT", api.PathEnrich, "", "", enrichOK, 405},
		{"healthz: wrong method", "POST", api.PathHealthz, "", "", "{}", 405},
		{"metrics: wrong method", "POST", api.PathMetrics, "", "", "{}", 405},
		{"profile: malformed", "PUT", api.PathAdminProfile, "tok", "", `[`, 400},
		{"profile: unknown", "PUT", api.PathAdminProfile, "tok", "", `{"profile":"nope"}`, 400},
		{"profile: empty", "PUT", api.PathAdminProfile, "tok", "", `{}`, 400},
		{"profile: null", "PUT", api.PathAdminProfile, "tok", "", `null`, 400},
		{"profile: not a string", "PUT", api.PathAdminProfile, "tok", "", `{"profile":1}`, 400},
		{"profile: trailing data", "PUT", api.PathAdminProfile, "tok", "", `{"profile":"healthy"}x`, 400},
		{"profile: body too large", "PUT", api.PathAdminProfile, "tok", "", `{"profile":"` + strings.Repeat("p", api.MaxBodyBytes) + `"}`, 413},
		{"profile: wrong method", "DELETE", api.PathAdminProfile, "tok", "", "", 405},
		{"profile: no token", "PUT", api.PathAdminProfile, "", "", `{"profile":"healthy"}`, 401},
		{"profile: wrong token", "GET", api.PathAdminProfile, "nope", "", "", 401},
		{"reset: wrong method", "GET", api.PathAdminReset, "tok", "", "", 405},
		{"reset: no token", "POST", api.PathAdminReset, "", "", "", 401},
		{"stats: wrong method", "POST", api.PathAdminStats, "tok", "", "{}", 405},
		{"stats: no token", "GET", api.PathAdminStats, "", "", "", 401},
		{"requests: wrong method", "DELETE", api.PathAdminRequests, "tok", "", "", 405},
		{"requests: no token", "GET", api.PathAdminRequests, "", "", "", 401},
		{"unknown path", "POST", "/nope", "", "", "{}", 404},
		{"enrich ok", "POST", api.PathEnrich, "", "", enrichOK, 200},
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, url+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", api.BearerPrefix+tt.token)
			}
			if tt.id != "" {
				req.Header.Set(api.HeaderRequestID, tt.id)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%v (a panic in the handler closes the connection)", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tt.want)
			}
			if resp.StatusCode == 400 || resp.StatusCode == 413 {
				var e struct{ Error string }
				if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
					t.Errorf("body %q is not a JSON error", body)
				}
			}
		})
	}
	if strings.Contains(logged.String(), "panic") {
		t.Errorf("the server panicked:\n%s", logged.String())
	}
	// Bad input never reached a station: not offered, not counted. Only
	// "enrich ok" did.
	for name, want := range map[string]int{api.Records: 0, api.Enrichment: 1} {
		st := svc.Stats().Stations[name]
		total := 0.0
		for _, n := range st.Requests {
			total += n
		}
		if st.HighWater.Offered != want || total != float64(want) {
			t.Errorf("%s: offered high water %d, requests %v; want %d", name, st.HighWater.Offered, st.Requests, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
