package main

import (
	"fmt"
	"os"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/mockproc"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/virtual"
)

// experimentMock is the mock service an experiment runs against.
type experimentMock struct {
	url       string
	restarter runner.Restarter // nil: it cannot be restarted
	stop      func()
}

// startExperimentMock is the mock service at target, or, without one, a
// mock service of our own on loopback with the experiment's seed and time
// scale. An experiment with phased scenarios gets one as a process of its
// own with a store in a temporary directory, so that a restart keeps every
// acknowledged write; the steady-state matrix keeps the in-process,
// in-memory one its committed results were measured with.
func startExperimentMock(target, bin string, spec design.Spec, cfg config.Config) (experimentMock, error) {
	switch {
	case spec.Own != nil: // load refused a --target: each run starts its own copies
		return experimentMock{stop: func() {}}, nil
	case target != "":
		return experimentMock{url: target, stop: func() {}}, nil
	case spec.HasPhased():
		mp, err := mockproc.StartMockProcess(bin, cfg)
		if err != nil {
			return experimentMock{}, fmt.Errorf("experiment: %w", err)
		}
		fmt.Fprintf(os.Stderr, "loadlab experiment: mock service at %s, a process of its own with its store in %s\n", mp.URL, mp.Dir)
		return experimentMock{url: mp.URL, restarter: mp, stop: func() { _ = mp.Stop() }}, nil
	}
	url, stop, err := inProcessMocks{}.StartMock(cfg)
	if err != nil {
		return experimentMock{}, fmt.Errorf("experiment: %w", err)
	}
	return experimentMock{url: url, stop: func() { _ = stop() }}, nil
}

// inProcessMocks serves mock services in this process on loopback, for
// the calibration.
type inProcessMocks struct{}

func (inProcessMocks) StartMock(cfg config.Config) (string, func() error, error) {
	cfg.Listen = "127.0.0.1:0"
	_, url, stop, err := mockservice.Start(cfg)
	return url, stop, err
}

// inProcessCopies serves virtual copies in this process, each on a
// loopback port of its own, for an experiment on one's own services.
type inProcessCopies struct{}

func (inProcessCopies) StartCopies(cfg config.Copies) (map[string]string, func() error, error) {
	return virtual.Start(cfg)
}

// runningMock is a mock service already running (--real-time-target):
// StartMock gives its address, and stopping it stops nothing.
type runningMock string

func (m runningMock) StartMock(config.Config) (string, func() error, error) {
	return string(m), func() error { return nil }, nil
}

// runLines prints each run as a JSON line as it ends (--json-lines).
type runLines struct {
	runner.NoProgress
	lines *resultsfile.LineWriter
	shard *plan.Shard
}

func (l runLines) RunDone(rec resultsfile.RunRecord, _, _ int, _ time.Duration) {
	l.lines.Write(resultsfile.KindRun, l.shard, rec)
}
