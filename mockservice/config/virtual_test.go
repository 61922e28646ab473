package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// copies is two valid virtual copies, the first with a token bucket.
func copies() config.Copies {
	ms := time.Millisecond
	return config.Copies{Seed: 7, TimeScale: 0.5, Copies: []config.Virtual{{
		Name: "payments", Listen: "127.0.0.1:0", Method: "POST", Paths: []string{"/v1/charge", "/v1/refund"},
		Station: config.Station{Workers: 8, Queue: 4, RejectStatus: 429}, RetryAfter: 1500 * ms,
		Service:  latency.Spec{Kind: latency.KindEmpirical, Quantiles: []latency.Quantile{{Q: 0, Value: 5 * ms}, {Q: 0.5, Value: 20 * ms}, {Q: 1, Value: 90 * ms}}},
		Slowdown: []float64{1, 1.1, 1.3},
		Rate:     &config.TokenBucket{PerSecond: 50, Burst: 5},
	}, {
		Name: "geo_lookup", Listen: "127.0.0.1:0", Method: "GET", Paths: []string{"/geo"},
		Station: config.Station{Workers: 2, Queue: config.UnboundedQueue},
		Service: latency.Spec{Kind: latency.KindFixed, Value: 40 * ms},
	}}}
}

// Each invalid setting is refused by a *field.Error naming it from the
// top of the file.
func TestCopiesValidationNamesTheField(t *testing.T) {
	if err := copies().Validate(); err != nil {
		t.Fatalf("valid copies: %v", err)
	}
	for _, c := range []struct {
		change func(*config.Copies)
		field  string
	}{
		{func(c *config.Copies) { c.Copies = nil }, "copies"},
		{func(c *config.Copies) { c.TimeScale = -1 }, "time_scale"},
		{func(c *config.Copies) { c.Copies[0].Name = "" }, "copies[0].name"},
		{func(c *config.Copies) { c.Copies[1].Name = "geo lookup" }, "copies[1].name"},
		{func(c *config.Copies) { c.Copies[1].Name = "payments" }, "copies[1].name"},
		{func(c *config.Copies) { c.Copies[0].Listen = "nowhere" }, "copies[0].listen"},
		{func(c *config.Copies) { c.Copies[0].Listen = "127.0.0.1:http" }, "copies[0].listen"},
		{func(c *config.Copies) { c.Copies[0].Listen, c.Copies[1].Listen = "127.0.0.1:9001", "127.0.0.1:9001" }, "copies[1].listen"},
		{func(c *config.Copies) { c.Copies[1].Listen = "0.0.0.0:9001" }, "admin_token"},
		{func(c *config.Copies) { c.Copies[0].Method = "OPTIONS" }, "copies[0].method"},
		{func(c *config.Copies) { c.Copies[0].Method = "post" }, "copies[0].method"},
		{func(c *config.Copies) { c.Copies[0].Paths = nil }, "copies[0].paths"},
		{func(c *config.Copies) { c.Copies[0].Paths[1] = "v1/refund" }, "copies[0].paths[1]"},
		{func(c *config.Copies) { c.Copies[0].Paths[1] = "/v1/charge" }, "copies[0].paths[1]"},
		{func(c *config.Copies) { c.Copies[0].Paths[0] = "/metrics" }, "copies[0].paths[0]"},
		{func(c *config.Copies) { c.Copies[0].Paths[0] = "/admin/stats" }, "copies[0].paths[0]"},
		{func(c *config.Copies) { c.Copies[0].Paths[0] = "/x?y=1" }, "copies[0].paths[0]"},
		{func(c *config.Copies) { c.Copies[0].OKStatus = 404 }, "copies[0].ok_status"},
		{func(c *config.Copies) { c.Copies[0].Station.Workers = 0 }, "copies[0].station.workers"},
		{func(c *config.Copies) { c.Copies[0].Station.RejectStatus = 500 }, "copies[0].station.reject_status"},
		{func(c *config.Copies) { c.Copies[0].RetryAfter = -time.Second }, "copies[0].retry_after"},
		{func(c *config.Copies) { c.Copies[0].Service.Quantiles[2].Q = 0.9 }, "copies[0].service"},
		{func(c *config.Copies) { c.Copies[0].Slowdown[1] = 0 }, "copies[0].slowdown[1]"},
		{func(c *config.Copies) { c.Copies[0].Rate.PerSecond = 0 }, "copies[0].rate.per_second"},
		{func(c *config.Copies) { c.Copies[0].Rate.Burst = 0 }, "copies[0].rate.burst"},
		{func(c *config.Copies) { c.Copies[0].Rate.Status = 500 }, "copies[0].rate.status"},
		{func(c *config.Copies) { c.Copies[0].Rate.RetryAfter = -1 }, "copies[0].rate.retry_after"},
	} {
		cfg := copies()
		c.change(&cfg)
		err := cfg.Validate()
		if fe, ok := field.Of(err); !ok || fe.Field != c.field {
			t.Errorf("%v: want a *field.Error of %s", err, c.field)
		}
	}
	// The service's error names the point below the field.
	cfg := copies()
	cfg.Copies[0].Service.Quantiles[2].Q = 0.9
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), "copies[0].service: quantiles[2].q: 0.9 must be 1") {
		t.Errorf("service error %q", err)
	}
	// Two copies on port 0 are two ports, not one address twice.
	cfg = copies()
	cfg.Copies[1].Listen = cfg.Copies[0].Listen
	if err := cfg.Validate(); err != nil {
		t.Errorf("two copies on port 0: %v", err)
	}
	// With a token, a copy may listen on every interface.
	cfg.AdminToken, cfg.Copies[1].Listen = "t", ":9001"
	if err := cfg.Validate(); err != nil {
		t.Errorf("all interfaces with a token: %v", err)
	}
}

// A file of copies reads with durations as text, unknown keys refused,
// the zero settings given their defaults.
func TestLoadCopies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "copies.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`seed: 7
copies:
  - name: payments
    listen: 127.0.0.1:0
    method: POST
    paths: [/v1/charge]
    station: {workers: 3, queue: 2}
    retry_after: 1s
    service: {kind: empirical, quantiles: [{q: 0, value: 10ms}, {q: 0.9, value: 40ms}, {q: 1, value: 70ms}]}
    slowdown: [1, 1.5]
    rate: {per_second: 20, burst: 1, retry_after: 2s}
`)
	c, err := config.LoadCopies(path)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Copies[0]
	if c.TimeScale != 1 || c.ShutdownTimeout != config.DefaultShutdownTimeout || v.OKStatus != 200 || v.Station.RejectStatus != 503 ||
		v.RetryAfter != time.Second || v.Rate.Status != 429 || v.Rate.RetryAfter != 2*time.Second || v.Service.Quantiles[1].Value != 40*time.Millisecond {
		t.Errorf("read %+v (copy %+v, rate %+v); want the defaults filled and durations read", c, v, *v.Rate)
	}
	write("copies: [{name: x, listen: '127.0.0.1:0', method: GET, paths: [/], station: {workers: 1}, service: {kind: fixed}, slots: 3}]\n")
	if _, err := config.LoadCopies(path); err == nil || !strings.Contains(err.Error(), "slots") {
		t.Errorf("unknown key: %v, want it named", err)
	}
	write("copies: [{name: x, listen: '127.0.0.1:0', method: GET, paths: [/], station: {workers: 0}, service: {kind: fixed}}]\n")
	if _, err := config.LoadCopies(path); !field.Is(err, "copies[0].station.workers") {
		t.Errorf("zero workers: %v, want copies[0].station.workers", err)
	}
}

// A copy's JSON is its YAML's keys, durations in nanoseconds.
func TestVirtualJSON(t *testing.T) {
	b, err := json.Marshal(copies().Copies[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "listen", "method", "paths", "station", "retry_after", "service", "slowdown", "rate"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks %q", b, k)
		}
	}
	if m["retry_after"] != 1.5e9 || m["rate"].(map[string]any)["per_second"] != 50.0 {
		t.Errorf("JSON %s: want retry_after in nanoseconds and rate.per_second", b)
	}
	var back config.Virtual
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, copies().Copies[0]) {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// A copy's live settings change as the lab's stations' do, under its
// name, with its token bucket's rate besides; a bad patch changes nothing
// and names the field.
func TestApplyVirtualPatch(t *testing.T) {
	v := copies().Copies[0]
	live := v.Live()
	got, err := config.ApplyVirtualPatch([]byte(`{"payments": {"workers": 3, "service": {"kind": "fixed", "value": "40ms"}, "rate": {"per_second": 20, "burst": 1}}}`), "payments", live)
	if err != nil {
		t.Fatal(err)
	}
	if got.Station.Workers != 3 || got.Station.Queue != 4 || got.Service.Kind != latency.KindFixed || got.Service.Value != 40*time.Millisecond ||
		got.Rate.PerSecond != 20 || got.Rate.Burst != 1 || got.Rate.Status != 429 || live.Rate.PerSecond != 50 {
		t.Errorf("patched %+v rate %+v (before: rate %+v)", got, *got.Rate, *live.Rate)
	}
	if got, err := config.ApplyVirtualPatch([]byte(`{"payments": {"queue": -1}}`), "payments", live); err != nil || got.Station.Queue != -1 || got.Rate != live.Rate {
		t.Errorf("queue only: %+v, %v", got, err)
	}
	noRate := copies().Copies[1].Live()
	for _, c := range []struct {
		body string
		live config.VirtualLive
		want string
	}{
		{`{"records": {"workers": 1}}`, live, "records: unknown station (one of payments)"},
		{`{"payments": {"slots": 1}}`, live, "payments.slots: unknown setting (one of workers, queue, reject_status, service, rate)"},
		{`{"payments": {"workers": 0}}`, live, "payments.workers: 0 must be ≥ 1"},
		{`{"payments": {"rate": {"burst": 0}}}`, live, "payments.rate.burst: 0 must be ≥ 1"},
		{`{"payments": {"rate": {"per_second": -1}}}`, live, "payments.rate.per_second: -1 must be a number > 0"},
		{`{"payments": {"rate": {"status": 503}}}`, live, "payments.rate.status: not a live setting (one of per_second, burst)"},
		{`{"payments": {"rate": 5}}`, live, "payments.rate: give a map of settings"},
		{`{"payments": {"workers": 2, "rate": {"burst": 0}}}`, live, "payments.rate.burst:"},
		{`{"geo_lookup": {"rate": {"burst": 2}}}`, noRate, "geo_lookup.rate: this copy has no token bucket"},
		{`{"payments": {"service": {"quantiles": [{"q": 0.5, "value": "1ms"}]}}}`, live, "payments.service.quantiles: 1 points"},
	} {
		name := "payments"
		if c.live.Rate == nil {
			name = "geo_lookup"
		}
		_, err := config.ApplyVirtualPatch([]byte(c.body), name, c.live)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error starting %q", c.body, err, c.want)
		}
	}
}
