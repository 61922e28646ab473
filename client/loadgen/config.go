// Package loadgen drives an HTTP endpoint with the admission model's
// generators, for real (a Schedule): an open ramp whose arrivals are sent
// when due whatever the replies do, or closed users who wait for each
// reply. Every scheduled arrival is sent or dropped; every sent request
// ends in exactly one outcome, joined with the mock service's request log
// when the target has one. What is done with a Result afterwards (the
// segments' merge, the report for people, the figures thresholds check)
// is client/loadresult's.
package loadgen

import (
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Outcome is how a sent request ended. Every sent request ends in exactly
// one; the first four are the admission model's.
type Outcome string

const (
	// OnTime: a 2xx answer before the client's deadline.
	OnTime Outcome = "on_time"
	// Rejected: 503 or 429 before the deadline.
	Rejected Outcome = "rejected"
	// TooLate: the client gave up; the server's log says it served the
	// request anyway, before the end of the run (its worker time is wasted).
	TooLate Outcome = "too_late"
	// Unfinished: queued or in service at the end of the run (by the
	// server's log), or still awaiting an answer when the run ended.
	Unfinished Outcome = "unfinished"
	// Cancelled: the client gave up and the server, configured to cancel on
	// disconnect, dropped the work: no wasted work.
	Cancelled Outcome = "cancelled"
	// TimedOut: the client gave up and the target keeps no request log, so
	// whether it still did the work is unknown, and not guessed.
	TimedOut Outcome = "timed_out"
	// Unjoined: the client gave up and the server's log has no entry for
	// the request (its log was full, or the join's own bound was reached):
	// its fate is unknown.
	Unjoined Outcome = "unjoined"
	// ErrorStatus: an HTTP status other than 2xx, 429 and 503; counted per
	// status code.
	ErrorStatus Outcome = "error_status"
	// TransportError: no HTTP answer (connection refused or reset, a
	// malformed answer) before the deadline.
	TransportError Outcome = "transport_error"
)

// Outcomes lists every Outcome in a stable order.
var Outcomes = []Outcome{OnTime, Rejected, TooLate, Unfinished, Cancelled, TimedOut, Unjoined, ErrorStatus, TransportError}

// Reply is what the client itself saw of a request, before any join with
// the server's log.
type Reply string

const (
	ReplyOnTime    Reply = "on_time"         // a 2xx answer before the deadline
	ReplyRejected  Reply = "rejected"        // 503 or 429 before the deadline
	ReplyStatus    Reply = "error_status"    // another status before the deadline
	ReplyTransport Reply = "transport_error" // no answer, and not for the deadline
	ReplyGaveUp    Reply = "gave_up"         // the client's deadline passed first
	ReplyPending   Reply = "pending"         // the run ended first
)

// Replies lists every Reply in a stable order.
var Replies = []Reply{ReplyOnTime, ReplyRejected, ReplyStatus, ReplyTransport, ReplyGaveUp, ReplyPending}

// Defaults of a Config, in model seconds.
const (
	DefaultTieWindowStep = 0.1 // a tenth of a model second
	DefaultLateThreshold = 0.1
	// DefaultMaxInFlight bounds the default in-flight cap: a pool of
	// senders and connections that large, at most.
	DefaultMaxInFlight = 10_000
	// MaxJoined bounds the requests kept for the join with the server's log
	// (those the client gave up on or that were pending at the end): the
	// mock service's request log keeps 100 000 by default. Beyond it a
	// request is unjoined, and counted.
	MaxJoined = 100_000
	// MaxDuration bounds a run: its timeline has one entry per model
	// second.
	MaxDuration = 86_400
	// MaxArrivals bounds an open schedule (rate × duration) and the sends
	// of closed users.
	MaxArrivals = 100_000_000
	// MaxUsers bounds the closed generator's users (a goroutine each).
	MaxUsers = 100_000
)

// Config is one load run: the schedule, the arrival mode and the time
// scale, and how to send. Validate names its fields: the schedule's by
// their own names (it is embedded), the others by their snake_case names
// ("max_in_flight").
type Config struct {
	// Target is the URL each request is POSTed to.
	Target string
	Schedule
	// Endpoint describes the endpoint behind Target, for the result only.
	Endpoint Endpoint
	Arrivals Arrivals
	// TimeScale: one model second lasts TimeScale real seconds.
	TimeScale float64
	// Client is the HTTP client: ClientFastHTTP (the default, "") or
	// ClientNetHTTP. Either way the send lag is taken when each request has
	// been written to its connection.
	Client HTTPClient
	// MaxInFlight caps requests awaiting an outcome; an arrival that finds
	// the cap reached is dropped, and counted. 0: the default, the most
	// requests the schedule can have awaiting an outcome at once (the peak
	// rate × (timeout + 1) model seconds, closed: the users), at most
	// DefaultMaxInFlight.
	MaxInFlight int
	// LateThreshold (model seconds): an open arrival the generator reaches
	// later than this after its scheduled time is behind, not sent; a
	// request written later than this after its scheduled time is a late
	// start. 0 means DefaultLateThreshold.
	LateThreshold float64
	// TieWindow (model seconds): a reply arriving within this window after
	// the client's deadline counts as before the give-up — the model's
	// order for simultaneous events (completions, then give-ups).
	TieWindow float64
	// AdminToken is the bearer token of the mock service's admin routes
	// (its reset and request log).
	AdminToken string
	// Wait is how long to keep asking a target that does not accept
	// connections yet (a mock service still starting); 0 asks once.
	Wait time.Duration
	// Registerer receives the generator's metrics (nil: none). It must not
	// hold them already.
	Registerer prometheus.Registerer
	Clock      Clock
	// Dial, when set, opens the connections of the net/http client
	// (ClientNetHTTP) and of the target's identification and admin
	// requests instead of the system's dialer: an in-memory wire to a mock
	// service in the same process, for tests whose clock is fake. The
	// fasthttp client refuses it (Validate).
	Dial transport.Dialer
	// CPU, when set, is where the open generator's send pool reads the
	// CPU time the process has used (it grows only while there is CPU to
	// spare); nil: the process's own. A test on a fake clock gives one
	// that keeps to that clock.
	CPU func() (time.Duration, bool)
	// Progress, when set, is called about every model second.
	Progress func(Progress)
	// Segment makes this generator one of Segment.Count sharing the
	// schedule and the target: it sends only its part (open arrival hit
	// when hit % Count is its Index, closed user u when u % Count is),
	// each arrival at its scheduled time, under the schedule's own request
	// id. Only segment 0 resets the mock service. The zero value is the
	// whole schedule.
	Segment Segment
	// StartAt is the moment model second 0 begins (zero: as soon as the
	// target is identified and reset). Segments of one schedule need a
	// common StartAt; a generator ready only after it returns
	// ErrStartPassed and sends nothing.
	StartAt time.Time
}

// Progress is the state of a run in progress.
type Progress struct {
	Elapsed, Duration float64 // model seconds
	// Sent, Dropped and Behind count arrivals so far: sent, refused by the
	// in-flight cap, and fallen due and not sent in time.
	Sent, Dropped, Behind int
	Replies               map[Reply]int
	// Latency is the on-time replies' so far, from their schedule (the
	// run's HDR histogram).
	Latency Latency
}

// Validate names the first bad field (a *field.Error).
func (c Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return err
	}
	u, err := url.Parse(c.Target)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return field.Errorf("target", "%q is not an http(s) URL", c.Target)
	case c.Arrivals != ArrivalsStep && c.Arrivals != ArrivalsUniform:
		return field.Errorf("arrivals", "%q is not %s or %s", c.Arrivals, ArrivalsStep, ArrivalsUniform)
	case c.Client != "" && c.Client != ClientNetHTTP && c.Client != ClientFastHTTP:
		return field.Errorf("client", "%q is not %s or %s", c.Client, ClientNetHTTP, ClientFastHTTP)
	case c.Dial != nil && c.Client != ClientNetHTTP:
		return field.Errorf("client", "a Dial of its own needs the %s client, not %s", ClientNetHTTP, c.clientName())
	case c.MaxInFlight < 0:
		return field.Errorf("max_in_flight", "%d must be ≥ 0", c.MaxInFlight)
	case c.LateThreshold < 0:
		return field.Errorf("late_threshold", "%v must be ≥ 0", c.LateThreshold)
	case c.TieWindow < 0 || c.TieWindow >= 0.5:
		return field.Errorf("tie_window", "%v must be in [0, 0.5) model seconds", c.TieWindow)
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return &field.Error{Field: "time_scale", Err: err}
	}
	if err := c.Segment.Validate(); err != nil {
		return err
	}
	if c.Segment.Count > 1 && c.StartAt.IsZero() {
		return field.Errorf("start_at", "segment %s shares its schedule with %d others and needs their common start time",
			c.Segment, c.Segment.Count-1)
	}
	return nil
}

// clientName is the HTTP client's name, the default's included.
func (c Config) clientName() string {
	if c.Client == "" {
		return string(ClientFastHTTP)
	}
	return string(c.Client)
}

// inFlightCap is MaxInFlight, or its default: no request can be awaiting
// an outcome longer than the timeout (plus the tie window, under one model
// second), so an open schedule never has more than its peak rate ×
// (timeout + 1) in flight, and closed users never more than their number.
// A segment's is its share: a second's arrivals are consecutive, so
// ceil(rate / n) of them at most are its, and so many of the users.
func (c Config) inFlightCap() int {
	if c.MaxInFlight > 0 {
		return c.MaxInFlight
	}
	sc := c.Schedule
	if sc.Mode != Open {
		return max(min(c.Segment.share(sc.Users), DefaultMaxInFlight), 1)
	}
	n := c.Segment.count()
	perSecond := (max(sc.BaseRate, sc.PeakRate) + n - 1) / n
	if perSecond > DefaultMaxInFlight/(sc.Timeout+1) { // overflow guard too
		return DefaultMaxInFlight
	}
	return max(perSecond*(sc.Timeout+1), 1)
}

// stationOf names the mock station behind a target path, or "".
func stationOf(path string) string {
	switch path {
	case api.PathEnrich:
		return api.Enrichment
	case api.PathRecords:
		return api.Records
	}
	return ""
}
