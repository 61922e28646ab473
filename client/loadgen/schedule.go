package loadgen

import (
	"github.com/loadlab/loadlab/mockservice/field"
)

// Mode is how the generator's requests arrive.
type Mode string

const (
	// Open sends Rate(t) arrivals in second t when they are due, whatever
	// the replies do.
	Open Mode = "open"
	// Closed runs Users users, each waiting for its request's outcome and
	// then thinking before the next.
	Closed Mode = "closed"
)

// closedStagger: user i first sends at second i mod closedStagger.
const closedStagger = 5

// Schedule is the generator's part of an admission scenario: when
// requests are sent and how long the client waits for each. Times are
// whole model seconds. Its JSON keys are the admission model's. The zero
// value is not valid: Validate says why.
type Schedule struct {
	// Timeout is how long the client waits for an answer before it gives
	// up.
	Timeout int  `json:"timeout_s"`
	Mode    Mode `json:"generator"`
	// Open: BaseRate arrivals per second, PeakRate from second RampStart
	// to before RampEnd.
	BaseRate  int `json:"base_rate"`
	PeakRate  int `json:"peak_rate"`
	RampStart int `json:"ramp_start_s"`
	RampEnd   int `json:"ramp_end_s"`
	// Closed: Users users; user i first sends at second i mod 5 and, after
	// a reply or a give-up, sends again Think seconds later (after a
	// rejection or a drop, at least one second later).
	Users    int `json:"users"`
	Think    int `json:"think_s"`
	Duration int `json:"duration_s"`
}

// Rate is the open schedule's arrivals in second t.
func (s Schedule) Rate(t int) int {
	if t >= s.RampStart && t < s.RampEnd {
		return s.PeakRate
	}
	return s.BaseRate
}

// Validate reports the first bad field as a *field.Error named by its
// JSON key ("duration_s"), the generator's bounds included.
func (s Schedule) Validate() error {
	switch {
	case s.Timeout < 1:
		return field.Errorf("timeout_s", "%d must be ≥ 1 s", s.Timeout)
	case s.Duration < 1:
		return field.Errorf("duration_s", "%d must be ≥ 1 s", s.Duration)
	case s.Duration > MaxDuration:
		return field.Errorf("duration_s", "%d model seconds is more than the limit of %d", s.Duration, MaxDuration)
	}
	switch s.Mode {
	case Open:
		switch {
		case s.BaseRate < 0:
			return field.Errorf("base_rate", "%d must be ≥ 0", s.BaseRate)
		case s.PeakRate < 0:
			return field.Errorf("peak_rate", "%d must be ≥ 0", s.PeakRate)
		case s.RampStart < 0:
			return field.Errorf("ramp_start_s", "%d must be ≥ 0", s.RampStart)
		case s.RampEnd < s.RampStart:
			return field.Errorf("ramp_end_s", "%d is before the ramp's start %d", s.RampEnd, s.RampStart)
		}
		if n := (RampPacer{Schedule: s}).Len(); n > MaxArrivals {
			return field.Errorf("duration_s", "%.0f arrivals at these rates is more than the limit of %d", n, MaxArrivals)
		}
	case Closed:
		switch {
		case s.Users < 1:
			return field.Errorf("users", "%d must be ≥ 1", s.Users)
		case s.Users > MaxUsers:
			return field.Errorf("users", "%d is more than the limit of %d", s.Users, MaxUsers)
		case s.Think < 0:
			return field.Errorf("think_s", "%d must be ≥ 0", s.Think)
		}
	default:
		return field.Errorf("generator", "%q is not %s or %s", s.Mode, Open, Closed)
	}
	return nil
}

// Endpoint describes the endpoint a schedule is sent to as the caller
// knows it (the shape of the endpoint loadlab load starts in-process):
// the generator records it in the result and does not otherwise use it.
// The zero value describes nothing.
type Endpoint struct {
	Workers     int `json:"workers"`
	ServiceTime int `json:"service_time_s"`
	Queue       int `json:"queue"`
}

// Scenario is what a result says of its run's parameters: the endpoint's
// description and the schedule, in one JSON object with the admission
// model's keys.
type Scenario struct {
	Endpoint
	Schedule
}

// Arrivals is how the open generator spreads a second's arrivals.
type Arrivals string

const (
	// ArrivalsStep sends all of a second's arrivals at its start, as the
	// admission model does.
	ArrivalsStep Arrivals = "step"
	// ArrivalsUniform spreads a second's arrivals evenly over it.
	ArrivalsUniform Arrivals = "uniform"
)

// DefaultTieWindow is the tie window (model seconds) that gives arrivals
// the model's order of simultaneous events: DefaultTieWindowStep with step
// arrivals (all of a second's at once), 0 with uniform ones.
func DefaultTieWindow(a Arrivals) float64 {
	if a == ArrivalsStep {
		return DefaultTieWindowStep
	}
	return 0
}

// HTTPClient names an HTTP client the generator can send with.
type HTTPClient string

const (
	// ClientFastHTTP is github.com/valyala/fasthttp, one connection per
	// sender: the default, less than half net/http's CPU per request
	// (BenchmarkDoer).
	ClientFastHTTP HTTPClient = "fasthttp"
	// ClientNetHTTP is Go's net/http, connections pooled and shared (HTTP
	// proxies from the environment are not used either way).
	ClientNetHTTP HTTPClient = "net/http"
)
