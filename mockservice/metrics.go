package mockservice

import (
	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "loadlab_mock"

// durationBuckets resolve 1 ms to 10 s: 25 exponential buckets.
var durationBuckets = prometheus.ExponentialBucketsRange(0.001, 10, 25)

var (
	descRequests = prometheus.NewDesc(namespace+"_requests_total",
		"Requests that reached a station, by how they ended: served, rejected (queue full), served_after_client_left, cancelled (client left, cancel-on-disconnect on).",
		[]string{"service", "outcome"}, nil)
	descBusy = prometheus.NewDesc(namespace+"_busy_workers",
		"Workers serving a request now.", []string{"service"}, nil)
	descWorkers = prometheus.NewDesc(namespace+"_workers",
		"Configured workers.", []string{"service"}, nil)
	descQueue = prometheus.NewDesc(namespace+"_queue_length",
		"Requests waiting for a worker now.", []string{"service"}, nil)
	descQueueCap = prometheus.NewDesc(namespace+"_queue_capacity",
		"Configured queue slots; -1 means unbounded.", []string{"service"}, nil)
	descOffered = prometheus.NewDesc(namespace+"_offered_concurrency",
		"HTTP requests open at the station now, including those being refused.", []string{"service"}, nil)
	descOfferedHWM = prometheus.NewDesc(namespace+"_offered_concurrency_high_water",
		"Most HTTP requests open at the station at once since the last reset.", []string{"service"}, nil)
	descBusyHWM = prometheus.NewDesc(namespace+"_busy_workers_high_water",
		"Most workers busy at once since the last reset.", []string{"service"}, nil)
	descQueueHWM = prometheus.NewDesc(namespace+"_queue_length_high_water",
		"Longest queue since the last reset.", []string{"service"}, nil)
	descWasted = prometheus.NewDesc(namespace+"_wasted_worker_seconds_total",
		"Worker time spent on requests whose client had already left.", []string{"service"}, nil)
	descStored = prometheus.NewDesc(namespace+"_stored_writes",
		"Distinct record ids stored since the last reset.", nil, nil)
	descDuplicates = prometheus.NewDesc(namespace+"_duplicate_writes_total",
		"Writes of an id already stored, since the last reset.", nil, nil)
	descProfile = prometheus.NewDesc(namespace+"_profile",
		"1 for the active latency profile.", []string{"profile"}, nil)
	descTimeScale = prometheus.NewDesc(namespace+"_time_scale",
		"Factor applied to every service time (1 is real time).", nil, nil)
)

// collector exports the service's own state at scrape time, so /metrics and
// /admin/stats read the same numbers and a reset clears both at once.
type collector struct{ s *Service }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descBusy, descWorkers, descQueue, descQueueCap,
		descOffered, descOfferedHWM, descBusyHWM, descQueueHWM, descWasted, descStored, descDuplicates, descProfile, descTimeScale} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	for _, name := range []string{Enrichment, Records} {
		s := st.Stations[name]
		for _, o := range Outcomes {
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
	}
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

func newHistograms() (queueWait, service *prometheus.HistogramVec) {
	queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "queue_wait_seconds",
		Help:    "Time from arrival at a station to a worker, for requests that got one.",
		Buckets: durationBuckets,
	}, []string{"service"})
	service = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "service_seconds",
		Help:    "Time a worker was held by a request (the sampled service time, after the time scale, as slept).",
		Buckets: durationBuckets,
	}, []string{"service"})
	return queueWait, service
}
