// Package compare holds the exact models beside the measurements: it turns
// a model's scenario into what a real run needs (the generator's schedule,
// the endpoint's configuration), runs the real run and the model, sets
// their figures side by side, and writes the models' own tables and charts
// for people. The models stay pure (package models); the generator and the
// replay measure (packages loadgen and replay).
package compare

import (
	"errors"
	"net/http"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Schedule is the generator's part of the admission scenario sc: its
// generator, rates, users, think time, duration and client timeout.
func Schedule(sc models.AdmissionScenario) loadgen.Schedule {
	return loadgen.Schedule{Timeout: sc.Timeout, Mode: mode(sc.Generator),
		BaseRate: sc.BaseRate, PeakRate: sc.PeakRate, RampStart: sc.RampStart, RampEnd: sc.RampEnd,
		Users: sc.Users, Think: sc.Think, Duration: sc.Duration}
}

// mode is the generator's mode of the model's generator g.
func mode(g models.Generator) loadgen.Mode {
	switch g {
	case models.GeneratorOpen:
		return loadgen.Open
	case models.GeneratorClosed:
		return loadgen.Closed
	}
	return loadgen.Mode(g) // neither: the schedule's Validate names it
}

// Endpoint describes the admission scenario sc's endpoint (its workers,
// service time and queue) for a load result.
func Endpoint(sc models.AdmissionScenario) loadgen.Endpoint {
	return loadgen.Endpoint{Workers: sc.Workers, ServiceTime: sc.ServiceTime, Queue: sc.Queue}
}

// AdmissionEndpoint is the mock service that serves the admission
// scenario sc's endpoint on loopback: sc's workers, service time and
// queue, 429 when full, at time scale scale, with a tie window of tie
// model seconds.
func AdmissionEndpoint(sc models.AdmissionScenario, scale, tie float64) config.Config {
	return config.Endpoint(config.Station{Workers: sc.Workers, Queue: sc.Queue, RejectStatus: http.StatusTooManyRequests,
		TieWindow: time.Duration(tie * scale * float64(time.Second))}, time.Duration(sc.ServiceTime)*time.Second, scale)
}

// ReplayEndpoint is the mock service that replays the concurrency
// scenario sc's workloads on loopback: replay mode (each request served
// for exactly its workload duration), sc's workers, an unbounded FIFO
// queue, precise timers, and a request log that holds a whole workload.
func ReplayEndpoint(sc models.ConcurrencyScenario, scale float64) config.Config {
	cfg := config.Default()
	cfg.Listen, cfg.TimeScale, cfg.Replay = "127.0.0.1:0", scale, true
	cfg.Enrichment = config.Station{Workers: sc.Workers, Queue: config.UnboundedQueue, RejectStatus: http.StatusServiceUnavailable,
		PreciseTimers: true}
	cfg.RequestLogCap = max(cfg.RequestLogCap, sc.Requests)
	return cfg
}

// ModelField returns err with a model's *models.FieldError as a
// *field.Error of the same field, so that a command's field.Names can name
// it; any other error is returned unchanged, and nil stays nil.
func ModelField(err error) error {
	var fe *models.FieldError
	if errors.As(err, &fe) {
		return &field.Error{Field: fe.Field, Err: fe.Err}
	}
	return err
}
