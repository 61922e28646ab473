package models

import (
	"errors"
	"fmt"
	"slices"
)

// Generators of the admission model.
const (
	GeneratorOpen   = "open"
	GeneratorClosed = "closed"
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
	Workers     int    `json:"workers"`
	ServiceTime int    `json:"service_time_s"`
	Queue       int    `json:"queue"`
	Timeout     int    `json:"timeout_s"`
	Generator   string `json:"generator"`
	BaseRate    int    `json:"base_rate"`
	PeakRate    int    `json:"peak_rate"`
	RampStart   int    `json:"ramp_start_s"`
	RampEnd     int    `json:"ramp_end_s"`
	Users       int    `json:"users"`
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

// Validate reports the first bad parameter by its flag name.
func (s AdmissionScenario) Validate() error {
	switch {
	case s.Workers < 1:
		return fmt.Errorf("workers: %d must be ≥ 1", s.Workers)
	case s.ServiceTime < 1:
		return fmt.Errorf("service-time: %d must be ≥ 1 s", s.ServiceTime)
	case s.Queue < 0:
		return fmt.Errorf("queue: %d must be ≥ 0", s.Queue)
	case s.Timeout < 1:
		return fmt.Errorf("timeout: %d must be ≥ 1 s", s.Timeout)
	case s.Duration < 1:
		return fmt.Errorf("duration: %d must be ≥ 1 s", s.Duration)
	}
	switch s.Generator {
	case GeneratorOpen:
		switch {
		case s.BaseRate < 0:
			return fmt.Errorf("base-rate: %d must be ≥ 0", s.BaseRate)
		case s.PeakRate < 0:
			return fmt.Errorf("peak-rate: %d must be ≥ 0", s.PeakRate)
		case s.RampStart < 0:
			return fmt.Errorf("ramp-start: %d must be ≥ 0", s.RampStart)
		case s.RampEnd < s.RampStart:
			return fmt.Errorf("ramp-end: %d is before ramp-start %d", s.RampEnd, s.RampStart)
		}
	case GeneratorClosed:
		switch {
		case s.Users < 1:
			return fmt.Errorf("users: %d must be ≥ 1", s.Users)
		case s.Think < 0:
			return fmt.Errorf("think: %d must be ≥ 0", s.Think)
		}
	default:
		return fmt.Errorf("generator: %q is not open or closed", s.Generator)
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
	var res AdmissionResult
	var running, queue []*admissionRequest
	var latencies []int
	nextSend := []int{}
	if s.Generator == GeneratorClosed {
		nextSend = make([]int, s.Users)
		for i := range nextSend {
			nextSend[i] = i % closedStagger
		}
	}
	lastNonEmpty := -1
	// settle schedules a closed user's next request after its request
	// ended at t: after wait seconds.
	settle := func(r *admissionRequest, t, wait int) {
		if r.user >= 0 {
			nextSend[r.user] = t + wait
		}
	}
	afterRejection := s.ThinkAfterRejection()
	for t := 0; t < s.Duration; t++ {
		sec := Second{T: t}
		// (1) completions
		kept := running[:0]
		for _, r := range running {
			if r.start+s.ServiceTime != t {
				kept = append(kept, r)
				continue
			}
			sec.Completed++
			if r.gaveUp {
				res.TooLate++
				sec.TooLate++
				res.WastedWorkerS += s.ServiceTime
				continue
			}
			res.OnTime++
			sec.OnTime++
			latencies = append(latencies, t-r.arrival)
			settle(r, t, s.Think)
		}
		running = kept
		// (2) starts
		for len(running) < s.Workers && len(queue) > 0 {
			r := queue[0]
			queue = queue[1:]
			r.start = t
			running = append(running, r)
		}
		// (3) give-ups, in arrival order
		for _, group := range [][]*admissionRequest{running, queue} {
			for _, r := range group {
				if !r.gaveUp && t-r.arrival >= s.Timeout {
					r.gaveUp = true
					sec.GaveUp++
					settle(r, t, s.Think)
				}
			}
		}
		// (4) arrivals
		arrive := func(user int) {
			sec.Arrivals++
			res.Requests++
			r := &admissionRequest{arrival: t, start: -1, user: user}
			switch {
			case len(running) < s.Workers:
				r.start = t
				running = append(running, r)
			case len(queue) < s.Queue:
				queue = append(queue, r)
			default:
				res.Rejected++
				sec.Rejected++
				settle(r, t, afterRejection)
			}
		}
		if s.Generator == GeneratorOpen {
			for range s.Rate(t) {
				arrive(-1)
			}
		} else {
			for u := range nextSend {
				if nextSend[u] == t {
					nextSend[u] = -1 // waiting for an outcome
					arrive(u)
				}
			}
		}
		sec.Busy, sec.QueueLen = len(running), len(queue)
		res.PeakQueue = max(res.PeakQueue, len(queue))
		if len(queue) > 0 {
			lastNonEmpty = t
		}
		if s.Queue > 0 && len(queue) == s.Queue && res.QueueFullAtS == nil {
			res.QueueFullAtS = ptr(t)
		}
		res.Timeline = append(res.Timeline, sec)
	}
	res.Unfinished = len(running) + len(queue)
	if lastNonEmpty >= 0 {
		res.QueueEmptyAtS = ptr(lastNonEmpty + 1)
	}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		res.P95LatencyS = ptr(NearestRank(latencies, 0.95))
	}
	if res.OnTime+res.Rejected+res.TooLate+res.Unfinished != res.Requests {
		return res, errors.New("models: admission outcomes do not add up to the requests")
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }
