package resultsfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// writeLog writes lines as a log file and returns its path.
func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "experiment.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A results line is picked by its kind, whatever the order of its keys;
// lines that are not JSON objects, and lines of other kinds (even one
// whose text holds a results line's opening), are skipped; the last
// results line wins.
func TestReadResultsLogPicksTheResultsLineByItsKind(t *testing.T) {
	path := writeLog(t,
		`loadlab experiment: 12 runs to go`,
		`{"kind":"results","results":{"format":2,"target":"first"}}`,
		`[1, 2]`,
		`{"kind":"run","run":{"reason":"{\"kind\":\"results\",\"results\":{}}"},"shard":"0/2"}`,
		`{"shard":"0/2","results":{"format":2,"target":"last","runs":[{"run":1,"mechanism":"cpus=1"}]},"kind":"results"}`,
		`{"kind":"results",`, // a line cut short by the log: not JSON
		`loadlab experiment: wrote results.json`)
	res, err := resultsfile.ReadResultsLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != "last" || len(res.Runs) != 1 {
		t.Fatalf("read target %q with %d runs, want the last results line's", res.Target, len(res.Runs))
	}
	// Read as ReadResults reads: normalized.
	if r := res.Runs[0]; r.Status != resultsfile.RunValid {
		t.Errorf("run 1: status %q, want valid", r.Status)
	}
}

// A log without a results line is ErrNoResultsLine; a results line whose
// results do not decode is an error that says so.
func TestReadResultsLogRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lines []string
		is    error
		want  string
	}{
		{"no results line", []string{`not JSON`, `{"kind":"run","run":{}}`}, resultsfile.ErrNoResultsLine, "did the experiment end?"},
		{"results that do not decode", []string{`{"kind":"results","results":[1]}`}, nil, "the results line does not decode"},
		{"no results", []string{`{"kind":"results"}`}, nil, "the results line does not decode"},
	} {
		_, err := resultsfile.ReadResultsLog(writeLog(t, tt.lines...))
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// What LineWriter writes, ReadResultsLog reads back: the committed
// results, as a shard's last line after its runs' lines, with the
// runner's progress interleaved; each line is {"kind": K, K: value} with
// the shard beside them, its keys in order.
func TestLineWriterRoundTrip(t *testing.T) {
	res, err := resultsfile.ReadResults("../results/conditions-v1/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := resultsfile.NewLineWriter(&log)
	shard := &plan.Shard{Index: 1, Count: 2}
	for _, run := range res.Runs[:3] {
		w.Write(resultsfile.KindRun, shard, run)
		log.WriteString("loadlab experiment: a run ended\n")
	}
	w.Write(resultsfile.KindResults, shard, res)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"kind":"results","results":{`) || !strings.HasSuffix(last, `},"shard":"1/2"}`) {
		t.Errorf("the results line reads %.60s…%s", last, last[max(0, len(last)-30):])
	}
	if !strings.HasPrefix(lines[0], `{"kind":"run","run":{`) {
		t.Errorf("a run's line reads %.60s…", lines[0])
	}
	path := writeLog(t, lines...)
	back, err := resultsfile.ReadResultsLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if testkit.JSON(t, back) != testkit.JSON(t, res) {
		t.Error("the results read back from the log differ from those written")
	}
}

// failingWriter fails every write.
type failingWriter struct{ n int }

func (f *failingWriter) Write([]byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// The first error sticks: nothing is written after it.
func TestLineWriterKeepsItsFirstError(t *testing.T) {
	f := &failingWriter{}
	w := resultsfile.NewLineWriter(f)
	w.Write(resultsfile.KindRun, nil, 1)
	w.Write(resultsfile.KindResults, nil, 2)
	if err := w.Err(); err == nil || err.Error() != "disk full" || f.n != 1 {
		t.Errorf("error %v after %d writes; want disk full after 1", err, f.n)
	}
}
