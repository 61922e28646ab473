package runlog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Folders of an experiment whose run log misses runs are found, newest
// first; a finished one, another experiment's and a folder without a log
// are not.
func TestUnfinishedFindsStoppedExperiments(t *testing.T) {
	parent := t.TempDir()
	at := func(name string) string { return filepath.Join(parent, name) }
	writeLog(t, at("t-20261201-100000"), 1).Close()
	writeLog(t, at("t-20261202-100000"), 3).Close()
	writeLog(t, at("t-20261203-100000"), 4).Close() // every run: finished
	writeLog(t, at("other-20261202-100000"), 1).Close()
	writeLog(t, at("t-x-20261202-100000"), 1).Close()
	renamed(t, at("t-x-20261202-100000"), "t-x") // experiment t-x, not t
	if got, want := Unfinished(parent, "t"), []string{at("t-20261202-100000"), at("t-20261201-100000")}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := Unfinished(at("none"), "t"); len(got) != 0 {
		t.Errorf("in a folder that does not exist: %v", got)
	}
}

// renamed makes the log in dir one of the experiment name.
func renamed(t *testing.T, dir, name string) {
	t.Helper()
	res := begun(t)
	res.Experiment.Name = name
	if err := os.Remove(filepath.Join(dir, Name)); err != nil {
		t.Fatal(err)
	}
	w := Create(dir, Invocation{File: "/x/spec.yaml"})
	if err := w.Begin(res); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// An experiment's first lines say where its run log is and the command
// that finishes it if it stops; a new one beside an earlier one that
// stopped says how to finish that; a resumed one says what its log holds.
func TestAnnounceSaysHowAStoppedRunIsFinished(t *testing.T) {
	parent := t.TempDir()
	stopped := filepath.Join(parent, "t-20261201-100000")
	writeLog(t, stopped, 1).Close()
	dir := filepath.Join(parent, "t-20261202-100000")
	lines := Announce(dir, Reach{Target: "http://m:8080"}, nil, true, "t")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "results go to "+dir+"; each run is kept in its run-log.jsonl as it ends") ||
		!strings.HasSuffix(lines[0], "finish it with: loadlab experiment --resume "+dir+" --target http://m:8080") {
		t.Errorf("a new run:\n%s", strings.Join(lines, "\n"))
	}
	if len(lines) == 2 && (!strings.Contains(lines[1], stopped+": an earlier run of this experiment stopped before its end; its run log holds what was measured (") ||
		!strings.HasSuffix(lines[1], "finish it with: loadlab experiment --resume "+stopped)) {
		t.Errorf("the earlier run:\n%s", lines[1])
	}
	l, err := Read(stopped)
	if err != nil {
		t.Fatal(err)
	}
	lines = Announce(stopped, Reach{}, l, false, "t")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "resuming "+filepath.Join(stopped, Name)+": experiment \"t\" begun") || !strings.Contains(lines[0], "1 of 4 runs measured") {
		t.Errorf("a resumed run:\n%s", strings.Join(lines, "\n"))
	}
}
