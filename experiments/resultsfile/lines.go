package resultsfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ErrNoResultsLine: a log without the line of an experiment's results.
var ErrNoResultsLine = errors.New(`no results line ({"kind":"results",...})`)

// ReadResultsLog reads the results of a loadlab experiment --json-lines
// log: its last {"kind":"results",…} line. Other lines (the runner's
// progress on stderr, interleaved in a pod's log) are skipped.
func ReadResultsLog(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxResultsBytes)
	var last []byte
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if bytes.HasPrefix(line, []byte(`{"kind":"results",`)) {
			last = append(last[:0], line...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if last == nil {
		return nil, fmt.Errorf("%s: %w: is it an experiment's JSON-lines log, and did the experiment end?", path, ErrNoResultsLine)
	}
	var line struct {
		Results *Results `json:"results"`
	}
	if err := json.Unmarshal(last, &line); err != nil || line.Results == nil {
		return nil, errors.Join(fmt.Errorf("%s: the results line does not decode", path), err)
	}
	return NormalizeResults(line.Results), nil
}
