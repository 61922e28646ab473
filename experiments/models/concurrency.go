// Package models holds exact, deterministic models of the two published
// simulations the project is built from: the concurrency simulation (48
// seeded requests against 8 workers and a FIFO queue, under client
// concurrency limits) and the admission model (one-second steps of an open
// ramp or closed users against workers, a bounded queue and client
// timeouts). They are pure functions of their parameters in simulated time,
// written from the documents' rules; real runs are compared with them.
package models

import (
	"cmp"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/loadlab/loadlab/mockservice/latency"
)

// Defaults of the published concurrency scenario.
const (
	DefaultConcurrencyRequests = 48
	DefaultConcurrencyWorkers  = 8
	DefaultConcurrencyTimeout  = 1500 * time.Millisecond
	DefaultSeedFrom            = 1
	DefaultSeedTo              = 100
)

// DefaultLimits are the client limits of the published table: sequential,
// 4, 8 and unbounded (48, every request at once).
var DefaultLimits = []int{1, 4, 8, 48}

// ConcurrencyScenario is every parameter of the concurrency model.
type ConcurrencyScenario struct {
	Requests  int           `json:"requests"`
	Workers   int           `json:"workers"`
	Timeout   time.Duration `json:"timeout_ns"`
	Durations latency.Spec  `json:"durations"`
	SeedFrom  uint32        `json:"seed_from"`
	SeedTo    uint32        `json:"seed_to"`
	Limits    []int         `json:"limits"`
}

// DefaultConcurrencyScenario is the published scenario.
func DefaultConcurrencyScenario() ConcurrencyScenario {
	return ConcurrencyScenario{
		Requests: DefaultConcurrencyRequests, Workers: DefaultConcurrencyWorkers,
		Timeout: DefaultConcurrencyTimeout, Durations: latency.ConcurrencySimulation(),
		SeedFrom: DefaultSeedFrom, SeedTo: DefaultSeedTo, Limits: slices.Clone(DefaultLimits),
	}
}

// Bounds of a concurrency scenario: the simulation keeps every workload's
// metrics to take medians.
const (
	MaxWorkloads = 100_000
	MaxRequests  = 100_000
)

// Validate reports the first bad parameter as a *FieldError named by its
// JSON key.
func (s ConcurrencyScenario) Validate() error {
	switch {
	case s.Requests < 1:
		return fieldErrorf("requests", "%d must be ≥ 1", s.Requests)
	case s.Workers < 1:
		return fieldErrorf("workers", "%d must be ≥ 1", s.Workers)
	case s.Timeout <= 0:
		return fieldErrorf("timeout_ns", "%v must be > 0", s.Timeout)
	case s.SeedTo < s.SeedFrom:
		return fieldErrorf("seed_to", "%d-%d ends before it starts", s.SeedFrom, s.SeedTo)
	case uint64(s.SeedTo)-uint64(s.SeedFrom) >= MaxWorkloads:
		return fieldErrorf("seed_to", "%d-%d is more than the limit of %d workloads", s.SeedFrom, s.SeedTo, MaxWorkloads)
	case s.Requests > MaxRequests:
		return fieldErrorf("requests", "%d is more than the limit of %d", s.Requests, MaxRequests)
	case len(s.Limits) == 0:
		return fieldErrorf("limits", "at least one is needed")
	}
	for _, l := range s.Limits {
		if l < 1 {
			return fieldErrorf("limits", "%d must be ≥ 1", l)
		}
	}
	if _, err := s.Durations.Build(); err != nil {
		return &FieldError{Field: "durations", Err: err}
	}
	return nil
}

// SHA256 is the hex SHA-256 of the scenario's canonical JSON (keys sorted,
// no white space).
func (s ConcurrencyScenario) SHA256() string {
	return canonicalSHA256(s)
}

func canonicalSHA256(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		panic(err)
	}
	canon, _ := json.Marshal(generic) // maps marshal with sorted keys
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// ConcurrencyMetrics are one trial's figures, or a statistic of them. All
// are float64 so that a median of an even count can be a half.
type ConcurrencyMetrics struct {
	Completed          float64 `json:"completed"`
	TimedOut           float64 `json:"timed_out"`
	ClientOutcomeMs    float64 `json:"client_outcome_ms"`
	ServerDrainMs      float64 `json:"server_drain_ms"`
	PeakInFlight       float64 `json:"peak_in_flight"`
	PeakQueue          float64 `json:"peak_queue"`
	P95QueueWaitMs     float64 `json:"p95_queue_wait_ms"`
	MaxQueueWaitMs     float64 `json:"max_queue_wait_ms"`
	WorkAfterTimeoutMs float64 `json:"work_after_timeout_ms"`
}

// fields lists the metrics in order, for statistics and tables.
func (m *ConcurrencyMetrics) fields() []*float64 {
	return []*float64{&m.Completed, &m.TimedOut, &m.ClientOutcomeMs, &m.ServerDrainMs, &m.PeakInFlight,
		&m.PeakQueue, &m.P95QueueWaitMs, &m.MaxQueueWaitMs, &m.WorkAfterTimeoutMs}
}

// StrategyResult is one client limit's statistics over the workloads.
type StrategyResult struct {
	Name   string             `json:"name"`
	Limit  int                `json:"limit"`
	Median ConcurrencyMetrics `json:"median"`
	Min    ConcurrencyMetrics `json:"min"`
	Max    ConcurrencyMetrics `json:"max"`
}

// ConcurrencyReport is the model's output for a scenario.
type ConcurrencyReport struct {
	Strategies []StrategyResult `json:"strategies"`
}

// StrategyName names a client limit as the record client does: sequential
// (1), unbounded (every request at once), bounded:N otherwise.
func StrategyName(limit, requests int) string {
	switch {
	case limit == 1:
		return "sequential"
	case limit >= requests:
		return "unbounded"
	default:
		return fmt.Sprintf("bounded:%d", limit)
	}
}

// Workload draws the request durations of workload seed: Requests values from
// Mulberry32(seed), in issue order.
func Workload(d latency.Distribution, requests int, seed uint32) []time.Duration {
	src := latency.NewMulberry32(seed)
	out := make([]time.Duration, requests)
	for i := range out {
		out[i] = d.Sample(src)
	}
	return out
}

// SimulateConcurrency runs every limit on every workload of the scenario.
// Every limit sees the same workloads.
func SimulateConcurrency(s ConcurrencyScenario) (ConcurrencyReport, error) {
	if err := s.Validate(); err != nil {
		return ConcurrencyReport{}, fmt.Errorf("models: %w", err)
	}
	dist, _ := s.Durations.Build()
	n := int(s.SeedTo-s.SeedFrom) + 1
	workloads := make([][]time.Duration, 0, n)
	for seed := uint64(s.SeedFrom); seed <= uint64(s.SeedTo); seed++ {
		workloads = append(workloads, Workload(dist, s.Requests, uint32(seed)))
	}
	var rep ConcurrencyReport
	var sim concurrencySim
	trials := make([]ConcurrencyMetrics, len(workloads))
	for _, limit := range s.Limits {
		for i, w := range workloads {
			trials[i] = sim.run(w, s.Workers, limit, s.Timeout)
		}
		med, lo, hi := summarize(trials)
		rep.Strategies = append(rep.Strategies, StrategyResult{
			Name: StrategyName(limit, s.Requests), Limit: limit, Median: med, Min: lo, Max: hi})
	}
	return rep, nil
}

// SimulateTrial runs one workload under one client limit.
func SimulateTrial(durations []time.Duration, workers, limit int, timeout time.Duration) ConcurrencyMetrics {
	var sim concurrencySim
	return sim.run(durations, workers, limit, timeout)
}

func summarize(trials []ConcurrencyMetrics) (med, lo, hi ConcurrencyMetrics) {
	col := make([]float64, len(trials))
	medF, loF, hiF := med.fields(), lo.fields(), hi.fields()
	for k := range medF {
		for i := range trials {
			col[i] = *trials[i].fields()[k]
		}
		slices.Sort(col)
		*medF[k] = Median(col)
		*loF[k], *hiF[k] = col[0], col[len(col)-1]
	}
	return med, lo, hi
}

// Median of sorted xs; the mean of the two middle values for an even count.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// NearestRank is the p-quantile (0 < p ≤ 1) of sorted xs by the
// nearest-rank method: the value at rank ceil(p·n).
func NearestRank[T any](sorted []T, p float64) T {
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// Event kinds, in the order they are processed within one instant: a
// service completion before a timeout at the same millisecond.
const (
	evComplete = iota
	evTimeout
)

type event struct {
	at   time.Duration
	kind int
	seq  int
	req  int
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if c := cmp.Compare(h[i].at, h[j].at); c != 0 {
		return c < 0
	}
	if h[i].kind != h[j].kind {
		return h[i].kind < h[j].kind
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// concurrencySim holds one trial's state; its buffers are reused.
type concurrencySim struct {
	events                  eventHeap
	seq                     int
	durations               []time.Duration
	issue, start, end       []time.Duration
	clientDone, timedOutReq []bool
	queue                   []int
	next, outstanding, busy int
	workers, limit          int
	timeout                 time.Duration
	m                       ConcurrencyMetrics
	lastOutcome             time.Duration
}

func (c *concurrencySim) push(at time.Duration, kind, req int) {
	heap.Push(&c.events, event{at: at, kind: kind, seq: c.seq, req: req})
	c.seq++
}

// issueUpTo issues requests while the client limit allows.
func (c *concurrencySim) issueUpTo(t time.Duration) {
	for c.outstanding < c.limit && c.next < len(c.durations) {
		i := c.next
		c.next++
		c.issue[i] = t
		c.outstanding++
		c.m.PeakInFlight = max(c.m.PeakInFlight, float64(c.outstanding))
		c.push(t+c.timeout, evTimeout, i)
		if c.busy < c.workers {
			c.startService(i, t)
		} else {
			c.queue = append(c.queue, i)
			c.m.PeakQueue = max(c.m.PeakQueue, float64(len(c.queue)))
		}
	}
}

func (c *concurrencySim) startService(i int, t time.Duration) {
	c.busy++
	c.start[i] = t
	c.push(t+c.durations[i], evComplete, i)
}

func (c *concurrencySim) run(durations []time.Duration, workers, limit int, timeout time.Duration) ConcurrencyMetrics {
	n := len(durations)
	*c = concurrencySim{
		events: c.events[:0], durations: durations, workers: workers, limit: limit, timeout: timeout,
		issue: grow(c.issue, n), start: grow(c.start, n), end: grow(c.end, n),
		clientDone: growBool(c.clientDone, n), timedOutReq: growBool(c.timedOutReq, n), queue: c.queue[:0],
	}
	c.issueUpTo(0)
	for c.events.Len() > 0 {
		e := heap.Pop(&c.events).(event)
		switch e.kind {
		case evComplete:
			c.end[e.req] = e.at
			c.m.ServerDrainMs = ms(e.at)
			c.busy--
			// The freed worker goes to the head of the queue before the
			// client can issue anything new: FIFO.
			if len(c.queue) > 0 {
				j := c.queue[0]
				c.queue = c.queue[1:]
				c.startService(j, e.at)
			}
			if !c.clientDone[e.req] {
				c.clientDone[e.req] = true
				c.m.Completed++
				c.outstanding--
				c.lastOutcome = e.at
				c.issueUpTo(e.at)
			}
		case evTimeout:
			if !c.clientDone[e.req] {
				c.clientDone[e.req] = true
				c.timedOutReq[e.req] = true
				c.m.TimedOut++
				c.outstanding--
				c.lastOutcome = e.at
				c.issueUpTo(e.at)
			}
		}
	}
	c.m.ClientOutcomeMs = ms(c.lastOutcome)
	waits := make([]time.Duration, n)
	var after time.Duration
	for i := range n {
		waits[i] = c.start[i] - c.issue[i]
		if c.timedOutReq[i] {
			deadline := c.issue[i] + timeout
			after += c.end[i] - max(c.start[i], deadline)
		}
	}
	slices.Sort(waits)
	c.m.P95QueueWaitMs = ms(NearestRank(waits, 0.95))
	c.m.MaxQueueWaitMs = ms(waits[n-1])
	c.m.WorkAfterTimeoutMs = ms(after)
	return c.m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func grow(s []time.Duration, n int) []time.Duration {
	if cap(s) < n {
		return make([]time.Duration, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func growBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// SummarizeTrials is the median, minimum and maximum of each metric over
// trials (the real replay's figures summarized as the model's are).
func SummarizeTrials(trials []ConcurrencyMetrics) (med, lo, hi ConcurrencyMetrics) {
	return summarize(trials)
}
