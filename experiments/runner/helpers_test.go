package runner

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// heard hears the runner's events through functions; a nil one is not
// called.
type heard struct {
	NoProgress
	advising func(scenario, dependency string)
	runDone  func(rec resultsfile.RunRecord)
}

func (h heard) Advising(scenario, dependency string) {
	if h.advising != nil {
		h.advising(scenario, dependency)
	}
}

func (h heard) RunDone(rec resultsfile.RunRecord, _, _ int, _ time.Duration) {
	if h.runDone != nil {
		h.runDone(rec)
	}
}

// mustNew is New's runner of cfg; the test fails if New refuses it.
func mustNew(t *testing.T, cfg Config, p Progress) *Runner {
	t.Helper()
	r, err := New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startFunc serves the calibration's mock services with a function.
type startFunc func(config.Config) (string, func() error, error)

func (f startFunc) StartMock(c config.Config) (string, func() error, error) { return f(c) }
