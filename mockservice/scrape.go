package mockservice

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape reads a running mock service's /metrics at baseURL and rebuilds its
// Stats from them, the way a Prometheus server would see the service. The
// metrics route needs no admin token.
func Scrape(ctx context.Context, client *http.Client, baseURL string) (Stats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return Stats{}, fmt.Errorf("scrape mock: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Stats{}, fmt.Errorf("scrape mock: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Stats{}, fmt.Errorf("scrape mock: %s answered %s", baseURL, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics rebuilds Stats from the text exposition of a mock service.
func ParseMetrics(r io.Reader) (Stats, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Stats{}, fmt.Errorf("scrape mock: parse: %w", err)
	}
	if _, ok := fams[namespace+"_requests_total"]; !ok {
		return Stats{}, fmt.Errorf("scrape mock: no %s_requests_total: not a loadlab mock service", namespace)
	}
	st := Stats{Stations: map[string]StationStats{}}
	station := func(name string) StationStats {
		s, ok := st.Stations[name]
		if !ok {
			s = StationStats{Requests: map[Outcome]float64{}}
		}
		return s
	}
	each := func(metric string, f func(m *dto.Metric, v float64)) {
		fam, ok := fams[metric]
		if !ok {
			return
		}
		for _, m := range fam.GetMetric() {
			v := m.GetGauge().GetValue()
			if fam.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			f(m, v)
		}
	}
	gauges := map[string]func(*StationStats, int){
		"_busy_workers":                   func(s *StationStats, v int) { s.Busy = v },
		"_workers":                        func(s *StationStats, v int) { s.Workers = v },
		"_queue_length":                   func(s *StationStats, v int) { s.QueueLength = v },
		"_queue_capacity":                 func(s *StationStats, v int) { s.QueueCapacity = v },
		"_offered_concurrency":            func(s *StationStats, v int) { s.Offered = v },
		"_offered_concurrency_high_water": func(s *StationStats, v int) { s.HighWater.Offered = v },
		"_busy_workers_high_water":        func(s *StationStats, v int) { s.HighWater.Busy = v },
		"_queue_length_high_water":        func(s *StationStats, v int) { s.HighWater.Queue = v },
	}
	for suffix, set := range gauges {
		each(namespace+suffix, func(m *dto.Metric, v float64) {
			name := label(m, "service")
			s := station(name)
			set(&s, int(v))
			st.Stations[name] = s
		})
	}
	each(namespace+"_requests_total", func(m *dto.Metric, v float64) {
		name := label(m, "service")
		s := station(name)
		s.Requests[Outcome(label(m, "outcome"))] = v
		st.Stations[name] = s
	})
	each(namespace+"_wasted_worker_seconds_total", func(m *dto.Metric, v float64) {
		name := label(m, "service")
		s := station(name)
		s.WastedSeconds = v
		st.Stations[name] = s
	})
	each(namespace+"_stored_writes", func(_ *dto.Metric, v float64) { st.StoredWrites = int(v) })
	each(namespace+"_duplicate_writes_total", func(_ *dto.Metric, v float64) { st.DuplicateWrites = int(v) })
	each(namespace+"_time_scale", func(_ *dto.Metric, v float64) { st.TimeScale = v })
	each(namespace+"_profile", func(m *dto.Metric, v float64) {
		if v == 1 {
			st.Profile = label(m, "profile")
		}
	})
	return st, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
