// Package runlog keeps an experiment's runs on disk as they end, in a log
// beside its results (run-log.jsonl: one JSON line each, synced before
// the next run starts), and reads the log back: to resume the experiment
// where it stopped (loadlab experiment --resume DIR), or to say what a
// folder whose results were never written holds (loadlab check).
//
// The log's first line begins the experiment: how it was invoked and its
// results before any run (experiment, hypotheses, lock, environment and
// binary). Then, in order: "advised" (the strategies "advised", when
// made), "run" (a run of the matrix ended), "twin" (its twin at time
// scale 1 ended) and "attempt" (a resumed attempt began). A killed
// process loses at most the run in flight and leaves at worst a torn last
// line, which the reader ignores and says so.
package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// Name is the log's file name in a results folder.
const Name = "run-log.jsonl"

// Format is the log's format, on its first line.
const Format = 1

// Invocation is what the experiment was started with that a resumed
// attempt repeats: the files it read (absolute; "" for those built into
// loadlab), the overrides of the file, the part of the matrix, and what
// the judging accepts.
type Invocation struct {
	File               string           `json:"file,omitempty"`
	Hypotheses         string           `json:"hypotheses,omitempty"`
	Overrides          design.Overrides `json:"overrides"`
	Shard              string           `json:"shard,omitempty"`
	AcceptBias         bool             `json:"accept_bias,omitempty"`
	AcceptUncalibrated bool             `json:"accept_uncalibrated,omitempty"`
}

// Absolute is inv with its files' paths made absolute, as a log holds
// them ("" stays "": a file built into loadlab).
func (inv Invocation) Absolute() Invocation {
	for _, p := range []*string{&inv.File, &inv.Hypotheses} {
		if *p != "" {
			if a, err := filepath.Abs(*p); err == nil {
				*p = a
			}
		}
	}
	return inv
}

// Same reports whether inv names the same files and settings as other.
func (inv Invocation) Same(other Invocation) bool { return reflect.DeepEqual(inv, other) }

// line is one line of the log; Kind says which of its fields are set.
type line struct {
	Kind       string                                  `json:"kind"`
	Format     int                                     `json:"format,omitempty"`
	Invocation *Invocation                             `json:"invocation,omitempty"`
	Results    *resultsfile.Results                    `json:"results,omitempty"`
	Attempt    *resultsfile.Attempt                    `json:"attempt,omitempty"`
	Advised    map[string]*resultsfile.AdvisedStrategy `json:"advised,omitempty"`
	Run        *resultsfile.RunRecord                  `json:"run,omitempty"`
}

// Kinds of line.
const (
	kindBegin   = "begin"
	kindAttempt = "attempt"
	kindAdvised = "advised"
	kindRun     = "run"
	kindTwin    = "twin"
)

// Writer is a runner.Journal writing the log of the results folder dir:
// Create begins a new log (opened at Begin, when the first run is near),
// Append another attempt of the log read.
type Writer struct {
	dir    string
	inv    Invocation
	resume *Log // nil: a new log
	f      *os.File
}

// Create is a writer of a new log in dir, replacing any there.
func Create(dir string, inv Invocation) *Writer { return &Writer{dir: dir, inv: inv} }

// Append is a writer of another attempt of the log l.
func Append(l *Log) *Writer { return &Writer{dir: filepath.Dir(l.Path), inv: l.Invocation, resume: l} }

// Path is the log's file.
func (w *Writer) Path() string { return filepath.Join(w.dir, Name) }

// Begin opens the log: a new one begins with the experiment's invocation
// and res; a resumed one is cut after its last whole line (a torn line
// goes) and gets an attempt line.
func (w *Writer) Begin(res *resultsfile.Results) error {
	if w.resume == nil {
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			return err
		}
		// The first line goes into a file of another name, renamed into
		// place once written: a kill in between leaves no log rather than
		// one that names no experiment, which no resume could take.
		tmp := w.Path() + ".new"
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		w.f = f
		begun := *res
		inv := w.inv
		if err := w.write(line{Kind: kindBegin, Format: Format, Invocation: &inv, Results: &begun}); err != nil {
			return err
		}
		if err := os.Rename(tmp, w.Path()); err != nil {
			return err
		}
		return atomicfile.SyncDir(w.dir)
	}
	f, err := os.OpenFile(w.Path(), os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w.f = f
	if err := f.Truncate(w.resume.whole); err != nil {
		return err
	}
	if _, err := f.Seek(w.resume.whole, 0); err != nil {
		return err
	}
	host, _ := os.Hostname()
	return w.write(line{Kind: kindAttempt, Attempt: &resultsfile.Attempt{Started: time.Now().UTC(), Hostname: host}})
}

// Advised logs the strategies "advised".
func (w *Writer) Advised(a map[string]*resultsfile.AdvisedStrategy) error {
	return w.write(line{Kind: kindAdvised, Advised: a})
}

// Run logs a run of the matrix.
func (w *Writer) Run(rec resultsfile.RunRecord) error { return w.write(line{Kind: kindRun, Run: &rec}) }

// Twin logs a run's twin at time scale 1.
func (w *Writer) Twin(rec resultsfile.RunRecord) error {
	return w.write(line{Kind: kindTwin, Run: &rec})
}

// Close closes the log.
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

// write appends l as one line and syncs it to the device. Once a write
// failed, every later one fails too: a line after a torn one would be
// lost to the reader.
func (w *Writer) write(l line) error {
	if w.f == nil {
		return errors.New("the run log is not open")
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		w.f.Close()
		w.f = nil
		return fmt.Errorf("%s: %w", w.Path(), err)
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		w.f = nil
		return fmt.Errorf("%s: %w", w.Path(), err)
	}
	return nil
}
