package mockservice

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/mockservice/api"
)

var (
	descRequests = prometheus.NewDesc(api.MetricRequests,
		"Requests that reached a station, by how they ended: served, rejected (queue full), served_after_client_left, cancelled (client left, cancel-on-disconnect on).",
		[]string{api.LabelService, api.LabelOutcome}, nil)
	descBusy = prometheus.NewDesc(api.MetricBusy,
		"Workers serving a request now.", []string{api.LabelService}, nil)
	descWorkers = prometheus.NewDesc(api.MetricWorkers,
		"Configured workers.", []string{api.LabelService}, nil)
	descQueue = prometheus.NewDesc(api.MetricQueue,
		"Requests waiting for a worker now.", []string{api.LabelService}, nil)
	descQueueCap = prometheus.NewDesc(api.MetricQueueCapacity,
		"Configured queue slots; -1 means unbounded.", []string{api.LabelService}, nil)
	descOffered = prometheus.NewDesc(api.MetricOffered,
		"Requests open at the station now, including those being refused; a request counts once its body is complete and valid.", []string{api.LabelService}, nil)
	descOfferedHWM = prometheus.NewDesc(api.MetricOfferedHighWater,
		"Most requests open at the station at once since the last reset (counted once the body is complete and valid).", []string{api.LabelService}, nil)
	descBusyHWM = prometheus.NewDesc(api.MetricBusyHighWater,
		"Most workers busy at once since the last reset.", []string{api.LabelService}, nil)
	descQueueHWM = prometheus.NewDesc(api.MetricQueueHighWater,
		"Longest queue since the last reset.", []string{api.LabelService}, nil)
	descWasted = prometheus.NewDesc(api.MetricWasted,
		"Worker time spent on requests whose client had already left.", []string{api.LabelService}, nil)
	descDraws = prometheus.NewDesc(api.MetricDraws,
		"Service times drawn from the seeded generator since the last reset.", []string{api.LabelService}, nil)
	descPlanned = prometheus.NewDesc(api.MetricPlanned,
		"Sum of the service times drawn since the last reset, in lab seconds (before the time scale).", []string{api.LabelService}, nil)
	descSeed = prometheus.NewDesc(api.MetricSeed,
		"Seed of the enrichment station's generator since the last reset; the system of record's is derived from it (api.RecordsSeed).", nil, nil)
	descStored = prometheus.NewDesc(api.MetricStored,
		"Distinct record ids stored since the last reset.", nil, nil)
	descDuplicates = prometheus.NewDesc(api.MetricDuplicates,
		"Writes of an id already stored, since the last reset.", nil, nil)
	descProfile = prometheus.NewDesc(api.MetricProfile,
		"1 for the active latency profile.", []string{api.LabelProfile}, nil)
	descTimeScale = prometheus.NewDesc(api.MetricTimeScale,
		"Factor applied to every service time (1 is real time).", nil, nil)
)

// collector exports the service's own state at scrape time, so /metrics and
// /admin/stats read the same numbers and a reset clears both at once.
type collector struct{ s *Service }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	DescribeStation(ch)
	for _, d := range []*prometheus.Desc{descSeed, descStored, descDuplicates, descProfile, descTimeScale} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	for _, name := range api.Stations {
		CollectStation(ch, name, st.Stations[name])
	}
	ch <- prometheus.MustNewConstMetric(descSeed, prometheus.GaugeValue, float64(st.Seed))
	ch <- prometheus.MustNewConstMetric(descStored, prometheus.GaugeValue, float64(st.StoredWrites))
	ch <- prometheus.MustNewConstMetric(descDuplicates, prometheus.CounterValue, float64(st.DuplicateWrites))
	ch <- prometheus.MustNewConstMetric(descTimeScale, prometheus.GaugeValue, st.TimeScale)
	for _, p := range c.s.cfg.ProfileNames() {
		v := 0.0
		if p == st.Profile {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descProfile, prometheus.GaugeValue, v, p)
	}
}

// DescribeStation sends the descriptions of the metrics CollectStation
// sends: a prometheus.Collector's Describe for stations of its own.
func DescribeStation(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descBusy, descWorkers, descQueue, descQueueCap,
		descOffered, descOfferedHWM, descBusyHWM, descQueueHWM, descWasted, descDraws, descPlanned} {
		ch <- d
	}
}

// CollectStation sends one station's figures, labelled service=name, as
// the mock service's metrics of a station (api.MetricRequests and the
// rest that api.ParseMetrics reads back into s).
func CollectStation(ch chan<- prometheus.Metric, name string, s api.StationStats) {
	for _, o := range api.Outcomes {
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, s.Requests[o], name, string(o))
	}
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
	}
	gauge(descBusy, s.Busy)
	gauge(descWorkers, s.Workers)
	gauge(descQueue, s.QueueLength)
	gauge(descQueueCap, s.QueueCapacity)
	gauge(descOffered, s.Offered)
	gauge(descOfferedHWM, s.HighWater.Offered)
	gauge(descBusyHWM, s.HighWater.Busy)
	gauge(descQueueHWM, s.HighWater.Queue)
	ch <- prometheus.MustNewConstMetric(descWasted, prometheus.CounterValue, s.WastedSeconds, name)
	ch <- prometheus.MustNewConstMetric(descDraws, prometheus.CounterValue, float64(s.Draws), name)
	ch <- prometheus.MustNewConstMetric(descPlanned, prometheus.CounterValue, s.PlannedLabSeconds, name)
}

// NewHistograms returns the histograms of queue waits and service times by
// station (label service), with loadlab's duration buckets; a station
// observes into its own (Station.Observe).
func NewHistograms() (queueWait, service *prometheus.HistogramVec) {
	queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    api.MetricQueueWaitHistogram,
		Help:    "Time from arrival at a station to a worker, for requests that got one.",
		Buckets: api.DurationBuckets,
	}, []string{api.LabelService})
	service = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    api.MetricServiceHistogram,
		Help:    "Time a worker was held by a request (the sampled service time, after the time scale, as slept).",
		Buckets: api.DurationBuckets,
	}, []string{api.LabelService})
	return queueWait, service
}
