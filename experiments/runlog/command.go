package runlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Held says what of an earlier experiment dir holds: results, a
// run log, or nothing ("").
func Held(dir string) string {
	var held []string
	for _, f := range []string{"results.json", Name} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			held = append(held, f)
		}
	}
	if len(held) == 0 {
		return ""
	}
	return "the results of an earlier run (" + strings.Join(held, ", ") + ")"
}

// Reach is what a command line said of where an experiment's mock
// services are and what it prints: what the command that finishes it
// says again (the rest comes from the run log).
type Reach struct {
	Target, AdminToken, RealTimeTarget string
	Wait                               time.Duration
	JSONLines                          bool
}

// Command is the command that finishes the experiment of dir, reached as
// r says.
func Command(dir string, r Reach) string {
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	cmd := []string{"loadlab", "experiment", "--resume", dir}
	for _, f := range []struct{ name, value string }{{"target", r.Target}, {"admin-token", r.AdminToken}, {"real-time-target", r.RealTimeTarget}} {
		if f.value != "" {
			cmd = append(cmd, "--"+f.name, f.value)
		}
	}
	if r.Wait > 0 {
		cmd = append(cmd, "--wait", r.Wait.String())
	}
	if r.JSONLines {
		cmd = append(cmd, "--json-lines")
	}
	return strings.Join(cmd, " ")
}

// Hint says, after an error or a partial result of dir, what dir's run
// log holds and how to finish its experiment ("" when it has no log).
func Hint(dir string) string {
	l, err := Read(dir)
	switch {
	case errors.Is(err, ErrNoLog):
		return ""
	case err != nil:
		return fmt.Sprintf("; its run log cannot be read: %v", err)
	case len(l.Missing()) == 0:
		return fmt.Sprintf("; its run log holds every run (%s): write the results with: loadlab experiment --resume %s", oneLine(l.Describe()), dir)
	}
	return fmt.Sprintf("; its run log holds what was measured (%s): finish it with: loadlab experiment --resume %s", oneLine(l.Describe()), dir)
}

// oneLine folds the lines of s into one.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// Unfinished are the folders in parent named experiment-… whose run log
// began that experiment and misses runs (it stopped before its end:
// killed, crashed, interrupted), newest first by name.
func Unfinished(parent, experiment string) []string {
	logs, _ := filepath.Glob(filepath.Join(parent, experiment+"-*", Name))
	var out []string
	for i := len(logs) - 1; i >= 0; i-- {
		dir := filepath.Dir(logs[i])
		if l, err := Read(dir); err == nil && l.Resume.Begun.Experiment.Name == experiment && len(l.Missing()) > 0 {
			out = append(out, dir)
		}
	}
	return out
}

// Announce is what an experiment writing into dir says first: where its
// results and run log go, and the command that finishes it if it stops;
// resumed (l set), what its log holds; fresh (a new folder beside earlier
// ones), each earlier run of the experiment that stopped before its end.
func Announce(dir string, reach Reach, l *Log, fresh bool, experiment string) []string {
	var out []string
	if l != nil {
		out = append(out, "resuming "+oneLine(l.Describe()))
	}
	abs, _ := filepath.Abs(dir)
	out = append(out, fmt.Sprintf("results go to %s; each run is kept in its %s as it ends, so if this stops "+
		"(Ctrl-C, a crash, kill -9, a reboot) finish it with: %s", abs, Name, Command(dir, reach)))
	for _, d := range Unfinished(filepath.Dir(dir), experiment) {
		if fresh && l == nil {
			out = append(out, fmt.Sprintf("%s: an earlier run of this experiment stopped before its end%s", d, Hint(d)))
		}
	}
	return out
}
