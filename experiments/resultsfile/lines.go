package resultsfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/loadlab/loadlab/experiments/plan"
)

// The kinds of the lines of loadlab experiment --json-lines: each run as
// it ends, then the results.
const (
	KindRun     = "run"
	KindResults = "results"
)

// LineWriter prints the JSON-lines log of loadlab experiment
// --json-lines: one JSON object per line, {"kind": K, "shard": "i/n", K:
// value}, the shard only when there is one. It is safe for concurrent
// use; the first error sticks.
type LineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewLineWriter is a LineWriter printing to w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// Write prints v as a line of kind kind, of shard when it is not nil;
// nothing after an error.
func (l *LineWriter) Write(kind string, shard *plan.Shard, v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	line := map[string]any{"kind": kind, kind: v}
	if shard != nil {
		line["shard"] = shard.String()
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, err = l.w.Write(append(b, '\n'))
	}
	l.err = err
}

// Err is the first error a Write met, if one did.
func (l *LineWriter) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// ErrNoResultsLine: a log without the line of an experiment's results.
var ErrNoResultsLine = errors.New(`no results line ({"kind":"results",...})`)

// ReadResultsLog reads the results of a loadlab experiment --json-lines
// log: its last line of kind "results", each line decoded as JSON and
// picked by its kind, whatever the order of its keys. Lines that are not
// JSON objects (the runner's progress on stderr, interleaved in a pod's
// log) and lines of other kinds are skipped.
func ReadResultsLog(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxResultsBytes)
	var last json.RawMessage
	found := false
	for sc.Scan() {
		var line struct {
			Kind    string          `json:"kind"`
			Results json.RawMessage `json:"results"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Kind != KindResults {
			continue
		}
		last, found = line.Results, true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !found {
		return nil, fmt.Errorf("%s: %w: is it an experiment's JSON-lines log, and did the experiment end?", path, ErrNoResultsLine)
	}
	var r *Results
	if err := json.Unmarshal(last, &r); err != nil || r == nil {
		return nil, errors.Join(fmt.Errorf("%s: the results line does not decode", path), err)
	}
	return NormalizeResults(r), nil
}
