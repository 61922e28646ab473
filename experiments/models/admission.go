package models

import (
	"errors"
	"fmt"
	"slices"
)

// Generator is how the admission model's requests arrive.
type Generator string

// Generators of the admission model.
const (
	// GeneratorOpen: Rate(t) arrivals in second t, whatever the replies.
	GeneratorOpen Generator = "open"
	// GeneratorClosed: Users users, each waiting for its request's outcome
	// and then thinking before the next.
	GeneratorClosed Generator = "closed"
)

// Defaults of the admission model: the document's opening run.
const (
	DefaultAdmissionWorkers = 8
	DefaultServiceTimeS     = 2
	DefaultAdmissionQueue   = 20
	DefaultClientTimeoutS   = 10
	DefaultBaseRate         = 2
	DefaultPeakRate         = 8
	DefaultRampStartS       = 10
	DefaultRampEndS         = 40
	DefaultUsers            = 16
	DefaultThinkS           = 1
	DefaultDurationS        = 60
	// closedStagger: user i first sends at second i mod closedStagger. The
	// document does not state the rule; this is the simple one inferred.
	closedStagger = 5
)

// AdmissionScenario is every parameter of the admission model. Times are
// whole seconds: the model advances in one-second steps.
type AdmissionScenario struct {
	Workers     int       `json:"workers"`
	ServiceTime int       `json:"service_time_s"`
	Queue       int       `json:"queue"`
	Timeout     int       `json:"timeout_s"`
	Generator   Generator `json:"generator"`
	BaseRate    int       `json:"base_rate"`
	PeakRate    int       `json:"peak_rate"`
	RampStart   int       `json:"ramp_start_s"`
	RampEnd     int       `json:"ramp_end_s"`
	Users       int       `json:"users"`
	// Think is how long a closed user waits before its next request: Think
	// seconds after a reply or a give-up (0: again in the same second), and
	// max(Think, 1) after a rejection (ThinkAfterRejection), so that a
	// rejected user waits at least one step and never resends into the
	// arrival phase it was rejected in.
	Think    int `json:"think_s"`
	Duration int `json:"duration_s"`
}

// DefaultAdmissionScenario is the document's opening run: 2 requests/s,
// 8/s from 10 s to 40 s, against 8 workers of 2 s, a queue of 20 and a
// 10 s client timeout, over 60 s.
func DefaultAdmissionScenario() AdmissionScenario {
	return AdmissionScenario{
		Workers: DefaultAdmissionWorkers, ServiceTime: DefaultServiceTimeS, Queue: DefaultAdmissionQueue,
		Timeout: DefaultClientTimeoutS, Generator: GeneratorOpen,
		BaseRate: DefaultBaseRate, PeakRate: DefaultPeakRate, RampStart: DefaultRampStartS, RampEnd: DefaultRampEndS,
		Users: DefaultUsers, Think: DefaultThinkS, Duration: DefaultDurationS,
	}
}

// Validate reports the first bad parameter as a *FieldError named by its
// JSON key.
func (s AdmissionScenario) Validate() error {
	switch {
	case s.Workers < 1:
		return fieldErrorf("workers", "%d must be ≥ 1", s.Workers)
	case s.ServiceTime < 1:
		return fieldErrorf("service_time_s", "%d must be ≥ 1 s", s.ServiceTime)
	case s.Queue < 0:
		return fieldErrorf("queue", "%d must be ≥ 0", s.Queue)
	case s.Timeout < 1:
		return fieldErrorf("timeout_s", "%d must be ≥ 1 s", s.Timeout)
	case s.Duration < 1:
		return fieldErrorf("duration_s", "%d must be ≥ 1 s", s.Duration)
	}
	switch s.Generator {
	case GeneratorOpen:
		switch {
		case s.BaseRate < 0:
			return fieldErrorf("base_rate", "%d must be ≥ 0", s.BaseRate)
		case s.PeakRate < 0:
			return fieldErrorf("peak_rate", "%d must be ≥ 0", s.PeakRate)
		case s.RampStart < 0:
			return fieldErrorf("ramp_start_s", "%d must be ≥ 0", s.RampStart)
		case s.RampEnd < s.RampStart:
			return fieldErrorf("ramp_end_s", "%d is before the ramp's start %d", s.RampEnd, s.RampStart)
		}
	case GeneratorClosed:
		switch {
		case s.Users < 1:
			return fieldErrorf("users", "%d must be ≥ 1", s.Users)
		case s.Think < 0:
			return fieldErrorf("think_s", "%d must be ≥ 0", s.Think)
		}
	default:
		return fieldErrorf("generator", "%q is not open or closed", s.Generator)
	}
	return nil
}

// ThinkAfterRejection is how long, in seconds, a closed user waits after a
// rejection before its next request: Think, but at least 1 — one scheduling
// step, because the arrival phase it was rejected in is over. (After a
// reply or a give-up it waits Think.)
func (s AdmissionScenario) ThinkAfterRejection() int { return max(s.Think, 1) }

// Rate is the open generator's arrivals at second t.
func (s AdmissionScenario) Rate(t int) int {
	if t >= s.RampStart && t < s.RampEnd {
		return s.PeakRate
	}
	return s.BaseRate
}

// Second is one second of the admission model, counted after all four
// phases of that second.
type Second struct {
	T         int `json:"t"`
	Arrivals  int `json:"arrivals"`
	OnTime    int `json:"on_time"`
	Rejected  int `json:"rejected"`
	TooLate   int `json:"too_late"`
	GaveUp    int `json:"gave_up"`
	Busy      int `json:"busy"`
	QueueLen  int `json:"queue"`
	Completed int `json:"completed"`
}

// AdmissionResult is the admission model's outcome. Every request ends in
// exactly one of OnTime, Rejected, TooLate, Unfinished.
type AdmissionResult struct {
	Requests      int      `json:"requests"`
	OnTime        int      `json:"on_time"`
	Rejected      int      `json:"rejected"`
	TooLate       int      `json:"too_late"`
	Unfinished    int      `json:"unfinished"`
	P95LatencyS   *int     `json:"p95_latency_s"`
	WastedWorkerS int      `json:"wasted_worker_s"`
	PeakQueue     int      `json:"peak_queue"`
	QueueEmptyAtS *int     `json:"queue_empty_at_s"`
	QueueFullAtS  *int     `json:"queue_full_at_s"`
	Timeline      []Second `json:"-"`
}

type admissionRequest struct {
	arrival, start int
	user           int
	gaveUp         bool
}

// SimulateAdmission runs the model. Within each second t: (1) requests whose
// service ends at t complete, on time or too late; (2) queued requests start
// on free workers, first in first out; (3) clients whose request has waited
// Timeout seconds give up (the server still serves it); (4) new requests
// arrive: each starts on a free worker, waits in the queue if it has room,
// or is rejected at once. Requests still queued or running after the last
// second are unfinished.
//
// Closed users: user i first sends at second i mod 5; within one arrival
// phase users send in order of their number. A user whose request ends at
// second t sends its next one at t + Think after a reply (phase 1) or a
// give-up (phase 3) — with Think 0 in the arrival phase of that same second,
// which comes after them — and at t + max(Think, 1) after a rejection
// (phase 4): a rejected user waits at least one scheduling step, since the
// arrival phase it was rejected in is over. With the document's Think of 1
// the two rules agree.
func SimulateAdmission(s AdmissionScenario) (AdmissionResult, error) {
	if err := s.Validate(); err != nil {
		return AdmissionResult{}, fmt.Errorf("models: %w", err)
	}
	m := newAdmission(s)
	for t := range s.Duration {
		sec := Second{T: t}
		m.complete(t, &sec)
		m.start(t)
		m.giveUp(t, &sec)
		m.arrive(t, &sec)
		m.endSecond(sec)
	}
	return m.finish()
}

// admission is the state of one run of the admission model.
type admission struct {
	s              AdmissionScenario
	res            AdmissionResult
	running, queue []*admissionRequest
	latencies      []int
	// nextSend is each closed user's next second to send (-1: waiting for
	// an outcome); empty for the open generator.
	nextSend     []int
	lastNonEmpty int
}

func newAdmission(s AdmissionScenario) *admission {
	m := &admission{s: s, lastNonEmpty: -1}
	if s.Generator == GeneratorClosed {
		m.nextSend = make([]int, s.Users)
		for i := range m.nextSend {
			m.nextSend[i] = i % closedStagger
		}
	}
	return m
}

// settle schedules a closed user's next request after its request ended
// at t: after wait seconds. An open arrival (user -1) has no next.
func (m *admission) settle(r *admissionRequest, t, wait int) {
	if r.user >= 0 {
		m.nextSend[r.user] = t + wait
	}
}

// complete is phase (1): requests whose service ends at t complete, on
// time or, given up on, too late.
func (m *admission) complete(t int, sec *Second) {
	kept := m.running[:0]
	for _, r := range m.running {
		if r.start+m.s.ServiceTime != t {
			kept = append(kept, r)
			continue
		}
		sec.Completed++
		if r.gaveUp {
			m.res.TooLate++
			sec.TooLate++
			m.res.WastedWorkerS += m.s.ServiceTime
			continue
		}
		m.res.OnTime++
		sec.OnTime++
		m.latencies = append(m.latencies, t-r.arrival)
		m.settle(r, t, m.s.Think)
	}
	m.running = kept
}

// start is phase (2): queued requests start on free workers, first in
// first out.
func (m *admission) start(t int) {
	for len(m.running) < m.s.Workers && len(m.queue) > 0 {
		r := m.queue[0]
		m.queue = m.queue[1:]
		r.start = t
		m.running = append(m.running, r)
	}
}

// giveUp is phase (3): clients whose request has waited Timeout seconds
// give up, in arrival order; the server still serves it.
func (m *admission) giveUp(t int, sec *Second) {
	for _, group := range [][]*admissionRequest{m.running, m.queue} {
		for _, r := range group {
			if !r.gaveUp && t-r.arrival >= m.s.Timeout {
				r.gaveUp = true
				sec.GaveUp++
				m.settle(r, t, m.s.Think)
			}
		}
	}
}

// arrive is phase (4): the second's new requests, open arrivals or closed
// users due now in order of their number.
func (m *admission) arrive(t int, sec *Second) {
	if m.s.Generator == GeneratorOpen {
		for range m.s.Rate(t) {
			m.admit(t, -1, sec)
		}
		return
	}
	for u := range m.nextSend {
		if m.nextSend[u] == t {
			m.nextSend[u] = -1 // waiting for an outcome
			m.admit(t, u, sec)
		}
	}
}

// admit is one arrival at t: it starts on a free worker, waits in the
// queue if it has room, or is rejected at once.
func (m *admission) admit(t, user int, sec *Second) {
	sec.Arrivals++
	m.res.Requests++
	r := &admissionRequest{arrival: t, start: -1, user: user}
	switch {
	case len(m.running) < m.s.Workers:
		r.start = t
		m.running = append(m.running, r)
	case len(m.queue) < m.s.Queue:
		m.queue = append(m.queue, r)
	default:
		m.res.Rejected++
		sec.Rejected++
		m.settle(r, t, m.s.ThinkAfterRejection())
	}
}

// endSecond records the state at the end of second sec.T, after its four
// phases.
func (m *admission) endSecond(sec Second) {
	sec.Busy, sec.QueueLen = len(m.running), len(m.queue)
	m.res.PeakQueue = max(m.res.PeakQueue, len(m.queue))
	if len(m.queue) > 0 {
		m.lastNonEmpty = sec.T
	}
	if m.s.Queue > 0 && len(m.queue) == m.s.Queue && m.res.QueueFullAtS == nil {
		m.res.QueueFullAtS = ptr(sec.T)
	}
	m.res.Timeline = append(m.res.Timeline, sec)
}

// finish counts what is still queued or running as unfinished and
// computes the figures of the whole run.
func (m *admission) finish() (AdmissionResult, error) {
	res := m.res
	res.Unfinished = len(m.running) + len(m.queue)
	if m.lastNonEmpty >= 0 {
		res.QueueEmptyAtS = ptr(m.lastNonEmpty + 1)
	}
	if len(m.latencies) > 0 {
		slices.Sort(m.latencies)
		res.P95LatencyS = ptr(NearestRank(m.latencies, 0.95))
	}
	if res.OnTime+res.Rejected+res.TooLate+res.Unfinished != res.Requests {
		return res, errors.New("models: admission outcomes do not add up to the requests")
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }
