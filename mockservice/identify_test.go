package mockservice_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// The real service identifies itself to api.Client.Identify on both load
// routes and in GET /healthz, with its version and its exact time scale;
// OPTIONS never reaches a station (not offered, not counted, not logged).
func TestIdentifiesItself(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.1 + 0.2 // 0.30000000000000004: read back exactly or not at all
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	ctx := context.Background()
	for _, path := range []string{api.PathEnrich, api.PathRecords} {
		id, err := m.Client.Identify(ctx, path)
		if err != nil {
			t.Fatalf("Identify %s: %v", path, err)
		}
		if id.Version != mockservice.Version() || id.TimeScale != cfg.TimeScale {
			t.Errorf("Identify %s: %+v, want version %q and time scale %v", path, id, mockservice.Version(), cfg.TimeScale)
		}
		// A raw OPTIONS with a request id and a body: still only an answer.
		req, err := http.NewRequest(http.MethodOptions, m.URL+path, strings.NewReader(writeBody("o")))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(api.HeaderRequestID, "options-"+path)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Allow") != "POST, OPTIONS" {
			t.Errorf("OPTIONS %s: %s, Allow %q; want 204 and POST, OPTIONS", path, resp.Status, resp.Header.Get("Allow"))
		}
	}
	st := m.Service.Stats()
	for _, name := range api.Stations {
		ss := st.Stations[name]
		total := 0.0
		for _, n := range ss.Requests {
			total += n
		}
		if ss.HighWater.Offered != 0 || total != 0 {
			t.Errorf("%s after OPTIONS: offered high water %d, %v requests; want nothing", name, ss.HighWater.Offered, total)
		}
	}
	if snap, err := m.Client.RequestLog(ctx); err != nil || len(snap.Entries)+snap.Dropped != 0 {
		t.Errorf("request log after OPTIONS: %+v, %v; want empty", snap, err)
	}

	resp, err := http.Get(m.URL + api.PathHealthz)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h api.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %s, %v", resp.Status, err)
	}
	want := api.Health{Status: "ok", Service: api.ServiceName, Version: mockservice.Version(), TimeScale: cfg.TimeScale}
	if h != want {
		t.Errorf("healthz %+v, want %+v", h, want)
	}
	scale, err := strconv.ParseFloat(resp.Header.Get(api.HeaderTimeScale), 64)
	if got := resp.Header.Get(api.HeaderMock); got != api.ServiceName+"/"+mockservice.Version() || err != nil || scale != cfg.TimeScale {
		t.Errorf("healthz headers: %s %q, %s %q", api.HeaderMock, got, api.HeaderTimeScale, resp.Header.Get(api.HeaderTimeScale))
	}
}
