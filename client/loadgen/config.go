// Package loadgen drives an HTTP endpoint with the admission model's
// generators, for real: an open ramp whose arrivals are sent when due
// whatever the replies do, or closed users who wait for each reply. Every
// scheduled arrival is sent or dropped; every sent request ends in exactly
// one outcome, joined with the mock service's request log when the target
// has one.
package loadgen

import (
	"fmt"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Arrival modes of the open generator.
const (
	// ArrivalsStep sends all of a second's arrivals at its start, as the
	// admission model does.
	ArrivalsStep = "step"
	// ArrivalsUniform spreads a second's arrivals evenly over it.
	ArrivalsUniform = "uniform"
)

// Outcome is how a sent request ended, in the model's terms. Every sent
// request ends in exactly one.
type Outcome string

const (
	OnTime     Outcome = "on_time"
	Rejected   Outcome = "rejected"
	TooLate    Outcome = "too_late"
	Unfinished Outcome = "unfinished"
	// TimedOut: the client gave up and the server keeps no request log,
	// so whether it still did the work is unknown.
	TimedOut Outcome = "timed_out"
)

// Reply is what the client itself saw of a request, before any join with
// the server's log.
type Reply string

const (
	ReplyOnTime   Reply = "on_time"  // a 2xx answer before the deadline
	ReplyRejected Reply = "rejected" // 503 or 429 before the deadline
	ReplyGaveUp   Reply = "gave_up"  // the client's deadline passed first
	ReplyPending  Reply = "pending"  // the run ended first
	ReplyError    Reply = "error"    // a transport error or another status
)

// Replies lists every Reply in a stable order.
var Replies = []Reply{ReplyOnTime, ReplyRejected, ReplyGaveUp, ReplyPending, ReplyError}

// Defaults of a Config, in model seconds.
const (
	DefaultTieWindowStep = 0.1 // a tenth of a model second
	DefaultLateThreshold = 0.1
	// defaultConns sizes the connection pool when nothing caps requests in
	// flight.
	defaultConns = 256
)

// Config is one load run: the admission scenario's generator and timeout
// (its workers, service time and queue describe the in-process endpoint
// only), the arrival mode and the time scale.
type Config struct {
	// Target is the URL each request is POSTed to.
	Target   string
	Scenario models.AdmissionScenario
	Arrivals string
	// TimeScale: one model second lasts TimeScale real seconds.
	TimeScale float64
	// MaxInFlight caps requests awaiting an outcome; an arrival that finds
	// the cap reached is dropped, and counted. 0: no cap.
	MaxInFlight int
	// LateThreshold (model seconds): an arrival sent later than this after
	// its scheduled time is counted as a late start.
	LateThreshold float64
	// TieWindow (model seconds): a reply arriving within this window after
	// the client's deadline counts as before the give-up — the model's
	// order for simultaneous events (completions, then give-ups).
	TieWindow  float64
	AdminToken string
	// Registerer receives the generator's metrics (nil: none). It must not
	// hold them already.
	Registerer prometheus.Registerer
	Clock      Clock
	// Progress, when set, is called about every model second.
	Progress func(Progress)
}

// Progress is the state of a run in progress.
type Progress struct {
	Elapsed, Duration float64 // model seconds
	Sent, Dropped     int
	Replies           map[Reply]int
}

// Validate names the first bad field.
func (c Config) Validate() error {
	if err := c.Scenario.Validate(); err != nil {
		return err
	}
	u, err := url.Parse(c.Target)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("target: %q is not an http(s) URL", c.Target)
	case c.Arrivals != ArrivalsStep && c.Arrivals != ArrivalsUniform:
		return fmt.Errorf("arrivals: %q is not step or uniform", c.Arrivals)
	case c.MaxInFlight < 0:
		return fmt.Errorf("max-in-flight: %d must be ≥ 0", c.MaxInFlight)
	case c.LateThreshold < 0:
		return fmt.Errorf("late-threshold: %v must be ≥ 0", c.LateThreshold)
	case c.TieWindow < 0 || c.TieWindow >= 0.5:
		return fmt.Errorf("tie-window: %v must be in [0, 0.5) model seconds", c.TieWindow)
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return fmt.Errorf("time-scale: %w", err)
	}
	return nil
}

// baseURL is the scheme and host of a target URL.
func baseURL(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	return u.Scheme + "://" + u.Host
}

// stationOf names the mock station behind a target path, or "".
func stationOf(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	switch u.Path {
	case api.PathEnrich:
		return api.Enrichment
	case api.PathRecords:
		return api.Records
	}
	return ""
}
