package api_test

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/api"
)

// Each copy's stream is its own and depends on its name alone: the same
// name and seed give the same seed, another name or seed another.
func TestCopySeed(t *testing.T) {
	a, b := api.CopySeed(1, "payments"), api.CopySeed(1, "geo")
	if a == b || a == 1 || api.CopySeed(1, "payments") != a || api.CopySeed(2, "payments") == a {
		t.Errorf("copy seeds: payments %d, geo %d, payments at seed 2 %d; want distinct and stable", a, b, api.CopySeed(2, "payments"))
	}
}

// The rate refusals of a station read back into its stats; a service
// without them (the lab's) reads 0.
func TestParseMetricsReadsRateRefusals(t *testing.T) {
	text := `# TYPE loadlab_mock_requests_total counter
loadlab_mock_requests_total{outcome="served",service="payments"} 21
loadlab_mock_requests_total{outcome="rejected",service="payments"} 2
# TYPE loadlab_mock_rate_limited_total counter
loadlab_mock_rate_limited_total{service="payments"} 57
`
	st, err := api.ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	p := st.Stations["payments"]
	if p.RateLimited != 57 || p.Requests[api.OutcomeServed] != 21 || p.Requests[api.OutcomeRejected] != 2 {
		t.Errorf("payments %+v; want 21 served, 2 rejected, 57 rate limited", p)
	}
	st, err = api.ParseMetrics(strings.NewReader(text[:strings.Index(text, "# TYPE loadlab_mock_rate")]))
	if err != nil || st.Stations["payments"].RateLimited != 0 {
		t.Errorf("without the metric: %+v, %v; want 0 rate limited", st.Stations["payments"], err)
	}
}
