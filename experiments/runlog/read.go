package runlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runner"
)

// ErrNoLog: the folder holds no run log.
var ErrNoLog = errors.New("no run log (" + Name + ")")

// Log is a run log read back.
type Log struct {
	// Path is the log's file.
	Path       string
	Invocation Invocation
	// Resume is what the log holds, as the runner resumes it.
	Resume runner.Resume
	// Torn, when set, says what of the log's end was ignored.
	Torn string
	// whole is the length of the log up to its last whole line.
	whole int64
}

// Read reads dir's run log. A last line that is not whole (a process
// killed while writing it) is ignored, and Torn says so; any other line
// that cannot be read is an error naming it.
func Read(dir string) (*Log, error) {
	path := filepath.Join(dir, Name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoLog)
	}
	if err != nil {
		return nil, err
	}
	l := &Log{Path: path}
	rs := &l.Resume
	rs.Runs, rs.Twins, rs.Attempt = map[plan.Unit]resultsfile.RunRecord{}, map[plan.Unit]resultsfile.RunRecord{}, map[plan.Unit]int{}
	for n, off := 1, 0; off < len(b); n++ {
		end := bytes.IndexByte(b[off:], '\n')
		var ln line
		if end < 0 || json.Unmarshal(b[off:off+end], &ln) != nil {
			if end < 0 || off+end+1 == len(b) {
				l.Torn = fmt.Sprintf("line %d (%d bytes) is not whole (its write was cut short: the process killed, or the device full); ignored", n, len(b)-off)
				break
			}
			return nil, fmt.Errorf("%s: line %d is not a line of a run log", path, n)
		}
		if err := l.add(n, ln); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		off += end + 1
		l.whole = int64(off)
	}
	if rs.Begun == nil {
		return nil, fmt.Errorf("%s: the log does not begin an experiment (its first line was lost?)", path)
	}
	return l, nil
}

// add takes line number n of the log.
func (l *Log) add(n int, ln line) error {
	rs := &l.Resume
	if n == 1 {
		if ln.Kind != kindBegin || ln.Results == nil || ln.Invocation == nil {
			return fmt.Errorf("a run log begins with its experiment, not %q", ln.Kind)
		}
		if ln.Format != Format {
			return fmt.Errorf("a run log of format %d: this loadlab reads format %d", ln.Format, Format)
		}
		l.Invocation, rs.Begun = *ln.Invocation, ln.Results
		rs.Attempts = []resultsfile.Attempt{{Started: ln.Results.Started, Hostname: ln.Results.Environment.Hostname}}
		return nil
	}
	attempt := len(rs.Attempts) - 1
	switch {
	case ln.Kind == kindAttempt && ln.Attempt != nil:
		rs.Attempts = append(rs.Attempts, *ln.Attempt)
	case ln.Kind == kindAdvised:
		rs.Advised = ln.Advised
	case (ln.Kind == kindRun || ln.Kind == kindTwin) && ln.Run != nil:
		u := plan.Unit{Cell: ln.Run.Cell, Run: ln.Run.Run}
		if ln.Kind == kindTwin {
			rs.Twins[u] = *ln.Run
			return nil
		}
		rs.Runs[u], rs.Attempt[u] = *ln.Run, attempt
		// A run again (its twin was lost): its earlier twin is not its.
		delete(rs.Twins, u)
	default:
		return fmt.Errorf("an unknown line %q", ln.Kind)
	}
	return nil
}

// Units are the units of the matrix (or of its shard) the log began.
func (l *Log) Units() []plan.Unit {
	b := l.Resume.Begun
	if b.Shard != nil {
		return b.Shard.Units
	}
	return plan.Units(b.Experiment)
}

// Missing are the units the log holds no run of, in order.
func (l *Log) Missing() []plan.Unit {
	var out []plan.Unit
	for _, u := range l.Units() {
		if _, ok := l.Resume.Runs[u]; !ok {
			out = append(out, u)
		}
	}
	return out
}

// Describe says in a few lines what the log holds and what is missing.
func (l *Log) Describe() string {
	b := l.Resume.Begun
	units, missing := l.Units(), l.Missing()
	var s strings.Builder
	fmt.Fprintf(&s, "%s: experiment %q begun %s", l.Path, b.Experiment.Name, b.Started.Format("2006-01-02 15:04:05 UTC"))
	if b.Shard != nil {
		fmt.Fprintf(&s, " (shard %s)", b.Shard.Shard)
	}
	if n := len(l.Resume.Attempts); n > 1 {
		fmt.Fprintf(&s, ", %d attempts", n)
	}
	fmt.Fprintf(&s, ": %d of %d runs measured", len(units)-len(missing), len(units))
	if n := len(l.Resume.Twins); n > 0 {
		fmt.Fprintf(&s, ", %d runs at time scale 1", n)
	}
	if len(missing) > 0 {
		fmt.Fprintf(&s, "; missing: %s", unitList(missing, 6))
	}
	if l.Torn != "" {
		fmt.Fprintf(&s, "\n%s: %s", l.Path, l.Torn)
	}
	return s.String()
}

// unitList names the first max units and counts the rest.
func unitList(units []plan.Unit, max int) string {
	var names []string
	for i, u := range units {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(units)-max))
			break
		}
		names = append(names, fmt.Sprintf("%s run %d", u.Cell, u.Run))
	}
	return strings.Join(names, ", ")
}
