package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Journal keeps what an experiment measured on disk as it goes, each call
// durable before it returns: a crash then loses at most the run in flight.
// An error stops the matrix at once (ErrJournal).
type Journal interface {
	// Begin: the experiment starts, as res (no runs yet) says; resumed,
	// another attempt of the experiment the journal holds starts.
	Begin(res *resultsfile.Results) error
	// Advised: the strategies "advised" were made.
	Advised(map[string]*resultsfile.AdvisedStrategy) error
	// Run: a run of the matrix ended; Twin: its twin at time scale 1 did.
	Run(rec resultsfile.RunRecord) error
	Twin(rec resultsfile.RunRecord) error
}

// ErrJournal: what was measured could not be kept on disk (a full device,
// a folder no longer writable); the matrix stopped at once.
var ErrJournal = errors.New("experiment: the run log could not be written")

// ErrNotSameExperiment: a resumed experiment is not the one its journal
// began (another experiment file, design, hypotheses, lock, binary or
// part of the matrix); nothing ran.
var ErrNotSameExperiment = errors.New("experiment: not the experiment the run log holds")

// Resume is what earlier attempts of an experiment measured, read back
// from its journal: Run goes on from it, running only what is missing.
type Resume struct {
	// Begun is the results as the first attempt began them (no runs).
	Begun *resultsfile.Results
	// Runs and Twins are the runs that ended and their twins at time
	// scale 1, by unit (the last logged of each).
	Runs, Twins map[plan.Unit]resultsfile.RunRecord
	// Advised is the strategies "advised" the first attempt made (nil:
	// none were logged, and they are made again).
	Advised map[string]*resultsfile.AdvisedStrategy
	// Attempts is each earlier attempt; attempt[i] of a unit says which
	// measured it (counted into Attempts[i].Runs by Run).
	Attempts []resultsfile.Attempt
	Attempt  map[plan.Unit]int
}

// begin checks a resumed experiment against its journal and starts the
// journal's attempt: res then keeps the first attempt's start and
// environment.
func (ex *execution) begin(res *resultsfile.Results) error {
	if rs := ex.cfg.Resume; rs != nil {
		if d := judge.RunDifference(rs.Begun, res); d != "" {
			return fmt.Errorf("%w: %s", ErrNotSameExperiment, d)
		}
		res.Started, res.Environment = rs.Begun.Started, rs.Begun.Environment
	}
	if ex.cfg.Journal == nil {
		return nil
	}
	if err := ex.cfg.Journal.Begin(res); err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	return nil
}

// resumed is unit u's run from an earlier attempt, when it has one that
// needs nothing more: a run of a calibration pair counts only with its
// twin (the two ran one after the other; a run whose twin was lost runs
// again, with its twin).
func (ex *execution) resumed(u plan.Unit, runs []resultsfile.RunRecord) (resultsfile.RunRecord, bool) {
	rs := ex.cfg.Resume
	if rs == nil {
		return resultsfile.RunRecord{}, false
	}
	rec, ok := rs.Runs[u]
	if !ok || !ex.paired(u) {
		return rec, ok
	}
	tw, ok := rs.Twins[u]
	if !ok {
		return rec, false
	}
	ex.bias.Twins = append(ex.bias.Twins, tw)
	ex.reportBias(u, append(runs, rec))
	return rec, true
}

// paired says whether unit u's run has a twin at time scale 1.
func (ex *execution) paired(u plan.Unit) bool {
	return ex.calibrating() && u.Run <= ex.bias.Pairs && slices.Contains(ex.bias.Cells, u.Cell)
}

// attempts is the results' account of a resumed experiment: each earlier
// attempt with the runs of it that the results keep, and this one.
func (ex *execution) attempts(res *resultsfile.Results, started time.Time) []resultsfile.Attempt {
	rs := ex.cfg.Resume
	if rs == nil {
		return nil
	}
	out := slices.Clone(rs.Attempts)
	for i := range out {
		out[i].Runs, out[i].Twins = 0, 0
	}
	host, _ := os.Hostname()
	this := resultsfile.Attempt{Started: started, Finished: res.Finished, Hostname: host}
	count := func(u plan.Unit, twin bool) {
		a := &this
		if i, ok := rs.Attempt[u]; ok && i < len(out) && !ex.ranNow[u] {
			a = &out[i]
		}
		if twin {
			a.Twins++
		} else {
			a.Runs++
		}
	}
	for _, r := range res.Runs {
		count(plan.Unit{Cell: r.Cell, Run: r.Run}, false)
	}
	if b := res.TimeScaleBias; b != nil {
		for _, r := range b.Twins {
			count(plan.Unit{Cell: r.Cell, Run: r.Run}, true)
		}
	}
	return append(out, this)
}
