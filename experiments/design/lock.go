package design

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// Lock is the preregistration record of a hypotheses file.
type Lock struct {
	File      string    `json:"file"`
	SHA256    string    `json:"sha256"`
	GitCommit string    `json:"git_commit,omitempty"`
	GitClean  bool      `json:"git_clean"`
	LockedAt  time.Time `json:"locked_at"`
	// Design is the experiment the hypotheses were locked with; a run of
	// another design is exploratory.
	Design *Design `json:"design,omitempty"`
}

// Design is what of an experiment a preregistration fixes: runs per cell,
// records per run, time scale, the cells, and how the strategy "advised"
// is made (the probes' steps and the target rate).
type Design struct {
	Runs      int         `json:"runs"`
	Records   int         `json:"records"`
	TimeScale float64     `json:"time_scale"`
	Cells     []string    `json:"cells"`
	Advise    *AdviseSpec `json:"advise,omitempty"`
	// Duration and Phased: a time-bounded design's duration, and the
	// phased scenarios its cells run (built-in ones included), as defined
	// when it was locked.
	Duration time.Duration                    `json:"duration,omitempty"`
	Phased   map[string]phases.PhasedScenario `json:"phased,omitempty"`
	// Batches and Calibration: the cells' records per run, and how the
	// time-scale bias is measured, when the experiment file says.
	Batches     []Batch          `json:"batches,omitempty"`
	Calibration *CalibrationSpec `json:"calibration,omitempty"`
	// RealTime: the cells that run at time scale 1.
	RealTime []Exclude `json:"real_time,omitempty"`
}

// DesignOf is spec's design.
func DesignOf(spec Spec) Design {
	d := Design{Runs: spec.Runs, Records: spec.Records, TimeScale: spec.TimeScale, Advise: spec.Advise, Duration: spec.Duration,
		Batches: spec.Batches, Calibration: spec.Calibration, RealTime: spec.RealTime}
	for _, c := range spec.Cells() {
		d.Cells = append(d.Cells, c.String())
	}
	for _, sc := range spec.Scenarios {
		if p, ok := spec.Phased(sc); ok {
			if d.Phased == nil {
				d.Phased = map[string]phases.PhasedScenario{}
			}
			d.Phased[sc] = p
		}
	}
	return d
}

// Exploratory says how spec differs from the design the lock records, or
// "" when it does not. Under the first judging rules, which locked no
// design, nothing is exploratory.
func Exploratory(l Lock, spec Spec, rules Rules) string {
	if !rules.Paired() {
		return ""
	}
	if l.Design == nil {
		return "not the preregistered design: the lock records none (run loadlab preregister)"
	}
	want, got := *l.Design, DesignOf(spec)
	var diff []string
	if got.Runs != want.Runs {
		diff = append(diff, fmt.Sprintf("runs %d, locked %d", got.Runs, want.Runs))
	}
	if got.Records != want.Records {
		diff = append(diff, fmt.Sprintf("records %d, locked %d", got.Records, want.Records))
	}
	if got.TimeScale != want.TimeScale {
		diff = append(diff, fmt.Sprintf("time scale %g, locked %g", got.TimeScale, want.TimeScale))
	}
	if !slices.Equal(got.Cells, want.Cells) {
		diff = append(diff, fmt.Sprintf("%d cells, locked %d (%s)", len(got.Cells), len(want.Cells), cellDiff(got.Cells, want.Cells)))
	}
	// A lock written before the advise section was part of the design
	// does not fix it.
	if want.Advise != nil && !reflect.DeepEqual(got.Advise, want.Advise) {
		diff = append(diff, "the advise section (how the advised strategy is made) differs from the locked one")
	}
	if got.Duration != want.Duration {
		diff = append(diff, fmt.Sprintf("duration %v, locked %v", got.Duration, want.Duration))
	}
	// Compared as JSON: what results.json keeps of them.
	if a, b := jsonOf(got.Phased), jsonOf(want.Phased); a != b {
		diff = append(diff, "the phased scenarios differ from the locked ones")
	}
	if a, b := jsonOf(got.Batches), jsonOf(want.Batches); a != b {
		diff = append(diff, "the batches (records per cell) differ from the locked ones")
	}
	if a, b := jsonOf(got.Calibration), jsonOf(want.Calibration); a != b {
		diff = append(diff, "the calibration section differs from the locked one")
	}
	if a, b := jsonOf(got.RealTime), jsonOf(want.RealTime); a != b {
		diff = append(diff, "the cells that run in real time differ from the locked ones")
	}
	if len(diff) == 0 {
		return ""
	}
	return "not the preregistered design: " + strings.Join(diff, "; ")
}

// cellDiff names the first cell that is in one list and not the other.
func cellDiff(got, want []string) string {
	for _, c := range got {
		if !slices.Contains(want, c) {
			return "not locked: " + c
		}
	}
	for _, c := range want {
		if !slices.Contains(got, c) {
			return "missing: " + c
		}
	}
	return "in another order"
}

// LockPath is where the lock of a hypotheses file lives.
func LockPath(hypotheses string) string {
	return strings.TrimSuffix(hypotheses, filepath.Ext(hypotheses)) + ".lock"
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	return fileSHA256(OS, path)
}

func fileSHA256(files Files, path string) (string, error) {
	b, err := files.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Preregister writes the lock of a hypotheses file: its SHA-256, the design
// of the experiment spec it is locked with and, in a git repository, the
// commit and whether the file is committed unchanged.
func Preregister(hypotheses string, spec Spec, now time.Time) (Lock, error) {
	sum, err := FileSHA256(hypotheses)
	if err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	d := DesignOf(spec)
	l := Lock{File: filepath.Base(hypotheses), SHA256: sum, LockedAt: now.UTC(), Design: &d}
	dir := filepath.Dir(hypotheses)
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
		l.GitCommit = strings.TrimSpace(string(out))
		err := exec.Command("git", "-C", dir, "diff", "--quiet", "HEAD", "--", filepath.Base(hypotheses)).Run()
		tracked := exec.Command("git", "-C", dir, "ls-files", "--error-unmatch", filepath.Base(hypotheses)).Run() == nil
		l.GitClean = err == nil && tracked
	}
	b, _ := json.MarshalIndent(l, "", "  ")
	if err := atomicfile.Write(LockPath(hypotheses), append(b, '\n')); err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	return l, nil
}

// ErrLockMismatch: the hypotheses file changed after it was preregistered.
var ErrLockMismatch = errors.New("hypotheses file does not match its preregistration lock")

// CheckLock verifies a hypotheses file against its lock.
func CheckLock(hypotheses string) (Lock, error) {
	return checkLock(OS, hypotheses)
}

func checkLock(files Files, hypotheses string) (Lock, error) {
	var l Lock
	b, err := files.ReadFile(LockPath(hypotheses))
	if err != nil {
		return l, fmt.Errorf("%w: no lock (%v); run loadlab preregister first", ErrLockMismatch, err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("lock %s: %w", LockPath(hypotheses), err)
	}
	sum, err := fileSHA256(files, hypotheses)
	if err != nil {
		return l, err
	}
	if sum != l.SHA256 {
		return l, fmt.Errorf("%w: %s has SHA-256 %s, locked %s", ErrLockMismatch, hypotheses, sum[:12], l.SHA256[:min(12, len(l.SHA256))])
	}
	return l, nil
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
