package virtual

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
)

var (
	descRateLimited = prometheus.NewDesc(api.MetricRateLimited,
		"Requests the token bucket in front of the station refused since the last reset; they never reached the station and are in no outcome of "+api.MetricRequests+".",
		[]string{api.LabelService}, nil)
	descSeed = prometheus.NewDesc(api.MetricSeed,
		"Seed of the copies since the last reset; this copy's station draws from api.CopySeed(seed, its name).", nil, nil)
	descTimeScale = prometheus.NewDesc(api.MetricTimeScale,
		"Factor applied to every service time, and dividing every rate (1 is real time).", nil, nil)
)

// collector exports the copy's state at scrape time: its station's
// metrics as the lab's stations export them, its rate refusals, its seed
// and its time scale, so /metrics and /admin/stats read the same numbers.
type collector struct{ c *Copy }

func (k collector) Describe(ch chan<- *prometheus.Desc) {
	mockservice.DescribeStation(ch)
	ch <- descRateLimited
	ch <- descSeed
	ch <- descTimeScale
}

func (k collector) Collect(ch chan<- prometheus.Metric) {
	st := k.c.Stats()
	name := k.c.cfg.Name
	s := st.Stations[name]
	mockservice.CollectStation(ch, name, s)
	ch <- prometheus.MustNewConstMetric(descRateLimited, prometheus.CounterValue, s.RateLimited, name)
	ch <- prometheus.MustNewConstMetric(descSeed, prometheus.GaugeValue, float64(st.Seed))
	ch <- prometheus.MustNewConstMetric(descTimeScale, prometheus.GaugeValue, st.TimeScale)
}
