package api

import (
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Names of the mock service's metrics and their labels. Counters and
// high-water marks are since the last reset.
const (
	MetricRequests           = "loadlab_mock_requests_total" // {service, outcome}
	MetricBusy               = "loadlab_mock_busy_workers"
	MetricWorkers            = "loadlab_mock_workers"
	MetricQueue              = "loadlab_mock_queue_length"
	MetricQueueCapacity      = "loadlab_mock_queue_capacity"
	MetricOffered            = "loadlab_mock_offered_concurrency"
	MetricOfferedHighWater   = "loadlab_mock_offered_concurrency_high_water"
	MetricBusyHighWater      = "loadlab_mock_busy_workers_high_water"
	MetricQueueHighWater     = "loadlab_mock_queue_length_high_water"
	MetricWasted             = "loadlab_mock_wasted_worker_seconds_total"
	MetricStored             = "loadlab_mock_stored_writes"
	MetricDuplicates         = "loadlab_mock_duplicate_writes_total"
	MetricProfile            = "loadlab_mock_profile" // {profile}
	MetricTimeScale          = "loadlab_mock_time_scale"
	MetricQueueWaitHistogram = "loadlab_mock_queue_wait_seconds"
	MetricServiceHistogram   = "loadlab_mock_service_seconds"
	MetricDraws              = "loadlab_mock_service_draws_total"
	MetricPlanned            = "loadlab_mock_planned_service_lab_seconds_total"
	MetricSeed               = "loadlab_mock_seed"
	// MetricRateLimited counts requests a token bucket in front of a
	// station refused (a virtual copy's rate limit), which never reached
	// the station: {service}.
	MetricRateLimited = "loadlab_mock_rate_limited_total"

	LabelService = "service"
	LabelOutcome = "outcome"
	LabelProfile = "profile"
)

// ParseMetrics rebuilds Stats from the text exposition of a mock service.
func ParseMetrics(r io.Reader) (Stats, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Stats{}, fmt.Errorf("parse metrics: %w", err)
	}
	if _, ok := fams[MetricRequests]; !ok {
		return Stats{}, fmt.Errorf("no %s: not a loadlab mock service", MetricRequests)
	}
	st := Stats{Stations: map[string]StationStats{}}
	// station applies set to the named station's figures.
	station := func(m *dto.Metric, set func(*StationStats)) {
		name := label(m, LabelService)
		s, ok := st.Stations[name]
		if !ok {
			s = StationStats{Requests: map[Outcome]float64{}}
		}
		set(&s)
		st.Stations[name] = s
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
		MetricBusy:             func(s *StationStats, v int) { s.Busy = v },
		MetricWorkers:          func(s *StationStats, v int) { s.Workers = v },
		MetricQueue:            func(s *StationStats, v int) { s.QueueLength = v },
		MetricQueueCapacity:    func(s *StationStats, v int) { s.QueueCapacity = v },
		MetricOffered:          func(s *StationStats, v int) { s.Offered = v },
		MetricOfferedHighWater: func(s *StationStats, v int) { s.HighWater.Offered = v },
		MetricBusyHighWater:    func(s *StationStats, v int) { s.HighWater.Busy = v },
		MetricQueueHighWater:   func(s *StationStats, v int) { s.HighWater.Queue = v },
	}
	for name, set := range gauges {
		each(name, func(m *dto.Metric, v float64) { station(m, func(s *StationStats) { set(s, int(v)) }) })
	}
	each(MetricRequests, func(m *dto.Metric, v float64) {
		station(m, func(s *StationStats) { s.Requests[Outcome(label(m, LabelOutcome))] = v })
	})
	each(MetricWasted, func(m *dto.Metric, v float64) {
		station(m, func(s *StationStats) { s.WastedSeconds = v })
	})
	each(MetricDraws, func(m *dto.Metric, v float64) {
		station(m, func(s *StationStats) { s.Draws = int(v) })
	})
	each(MetricPlanned, func(m *dto.Metric, v float64) {
		station(m, func(s *StationStats) { s.PlannedLabSeconds = v })
	})
	each(MetricRateLimited, func(m *dto.Metric, v float64) {
		station(m, func(s *StationStats) { s.RateLimited = v })
	})
	each(MetricSeed, func(_ *dto.Metric, v float64) { st.Seed = uint32(v) })
	each(MetricStored, func(_ *dto.Metric, v float64) { st.StoredWrites = int(v) })
	each(MetricDuplicates, func(_ *dto.Metric, v float64) { st.DuplicateWrites = int(v) })
	each(MetricTimeScale, func(_ *dto.Metric, v float64) { st.TimeScale = v })
	each(MetricProfile, func(m *dto.Metric, v float64) {
		if v == 1 {
			st.Profile = label(m, LabelProfile)
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
