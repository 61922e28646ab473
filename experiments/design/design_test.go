package design

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/phases"
)

func TestSpecErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want string
	}{
		{"unknown strategy", strings.Replace(exptest.TinySpec, "[C2, C4]", "[C2, C9]", 1), "spec.yaml:8: strategies[1]: unknown strategy"},
		{"unknown scenario", strings.Replace(exptest.TinySpec, "[slow-write]", "[slow-disk]", 1), "spec.yaml:9: scenarios[0]"},
		{"zero runs", strings.Replace(exptest.TinySpec, "runs: 3", "runs: 0", 1), "spec.yaml:3: runs:"},
		{"two runs", strings.Replace(exptest.TinySpec, "runs: 3", "runs: 2", 1), "spec.yaml:3: runs: 2 must be in [3, 1000] (a range over fewer runs is not a range)"},
		{"unknown key", exptest.TinySpec + "colour: red\n", "spec.yaml:12: colour: unknown field"},
		{"malformed", "name: [\n", "spec.yaml"},
		{"cpu without limit", strings.Replace(exptest.TinySpec, "cpus: 1}", "}", 1), "cpus[0]"},
		{"bad exclude", exptest.TinySpec + "exclude:\n  - {strategies: [C3]}\n", "exclude[0].strategies[0]"},
		{"empty batch", exptest.TinySpec + "batches:\n  - {strategies: [C2], records: 0}\n", "batches[0].records: 0 must be in [1, "},
		{"bad batch", exptest.TinySpec + "batches:\n  - {cpus: [cpus-2], records: 5}\n", "batches[0].cpus[0]"},
		{"pairs over runs", exptest.TinySpec + "calibration: {pairs: 4, max_bias: 0.02}\n", "calibration.pairs: 4 must be in [0, the runs 3]"},
		{"no limit", exptest.TinySpec + "calibration: {pairs: 3, max_bias: 0}\n", "calibration.max_bias: 0 must be > 0"},
		{"bad real time", exptest.TinySpec + "real_time:\n  - {scenarios: [healthy]}\n", "real_time[0].scenarios[0]"},
		{"advised split", strings.Replace(exptest.AdvisedSpec, "  - {name: cpus-1, cpus: 1}", "  - {name: cpus-1, cpus: 1}\n  - {name: cpus-2, cpus: 2}", 1) +
			"real_time:\n  - {cpus: [cpus-2]}\n", "the advised cells of slow-write are probed once"},
		{"phased in real time", exptest.PhasedSpec + "real_time:\n  - {scenarios: [drop]}\n", "drop is a phased scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := exptest.WriteFile(t, dir, "spec.yaml", tt.content)
			_, err := LoadSpec(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestHypothesesRefuseUnknownNames(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown metric", "metric: write_rejections", "metric: joy", "h.yaml:5: hypotheses[0] (T1).metric: unknown metric"},
		{"unknown strategy", "{strategy: C4, scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "{strategy: C7, scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "unknown strategy \"C7\""},
		{"unknown scenario", "scenario: slow-write, cpu: cpus-1}\n    op: \"==\"", "scenario: healthy, cpu: cpus-1}\n    op: \"==\"", "unknown scenario"},
		{"bad operator", `op: "=="`, `op: "~"`, "op:"},
		{"between needs a range", `op: "<="`, `op: between`, "threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := exptest.WriteFile(t, dir, "h.yaml", strings.Replace(exptest.TinyHypotheses, tt.from, tt.to, 1))
			_, err := LoadHypotheses(p, spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestLockRefusesAnEditedFile(t *testing.T) {
	dir := t.TempDir()
	h := exptest.WriteFile(t, dir, "h.yaml", exptest.TinyHypotheses)
	if _, err := CheckLock(h); !errors.Is(err, ErrLockMismatch) {
		t.Errorf("no lock yet: got %v, want ErrLockMismatch", err)
	}
	spec, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Preregister(h, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := CheckLock(h); err != nil || got.SHA256 != l.SHA256 || got.Design == nil || got.Design.Runs != 3 || len(got.Design.Cells) != 2 {
		t.Fatalf("unchanged file: %+v %v; want the design of 3 runs of 2 cells locked", got, err)
	}
	exptest.WriteFile(t, dir, "h.yaml", strings.Replace(exptest.TinyHypotheses, "threshold: 6", "threshold: 7", 1))
	if _, err := CheckLock(h); !errors.Is(err, ErrLockMismatch) {
		t.Errorf("edited file: got %v, want ErrLockMismatch", err)
	}
}

// Every committed hypotheses file loads against the experiment it was
// locked with, still matches its preregistration lock (a changed byte
// fails), and a full run of that experiment is not exploratory.
func TestCommittedFilesAreValidAndLocked(t *testing.T) {
	// Every committed hypotheses file, with the experiment it was locked
	// with: the experiment file, or, for a file an experiment file has
	// outgrown, the experiment its committed results ran.
	cases := []struct {
		spec, hyp string
		rules     Rules
	}{
		{"replication.yaml", "hypotheses-v5.yaml", RulesPairedV3},
		{"container.yaml", "container-hypotheses-v4.yaml", RulesPairedV3},
		{"adaptive.yaml", "adaptive-hypotheses-v2.yaml", RulesPairedV2},
		{"conditions.yaml", "conditions-hypotheses-v2.yaml", RulesPairedV2},
	}
	files, err := filepath.Glob("../*hypotheses*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d hypotheses files (%v), %d checked: a new one needs its case here", len(files), files, len(cases))
	}
	for _, c := range cases {
		c.spec, c.hyp = filepath.Join("..", c.spec), filepath.Join("..", c.hyp)
		var spec Spec
		var err error
		if strings.Contains(c.spec, "results/") {
			var r struct{ Experiment Spec }
			var b []byte
			if b, err = os.ReadFile(c.spec); err == nil {
				err = json.Unmarshal(b, &r)
				spec = r.Experiment
			}
		} else {
			spec, err = LoadSpec(c.spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		hs, err := LoadHypotheses(c.hyp, spec)
		if err != nil {
			t.Fatal(err)
		}
		if hs[0].Rules != c.rules {
			t.Errorf("%s: rules %q, want %q", c.hyp, hs[0].Rules, c.rules)
		}
		l, err := CheckLock(c.hyp)
		if err != nil {
			t.Fatal(err)
		}
		// The paired-v2 hypotheses are locked with the committed design:
		// a full run of the committed file is not exploratory.
		if why := Exploratory(l, spec, c.rules); why != "" {
			t.Errorf("%s with %s: %s", c.hyp, c.spec, why)
		}
	}
}

// A run of another design than the locked one is exploratory, and says
// how.
func TestExploratoryDesign(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	d := DesignOf(spec)
	lock := Lock{Design: &d}
	if why := Exploratory(lock, spec, RulesPairedV2); why != "" {
		t.Errorf("the locked design: %q", why)
	}
	other := spec
	other.Runs, other.Records, other.Strategies = 4, 50, []string{"C4"}
	why := Exploratory(lock, other, RulesPairedV2)
	want := "not the preregistered design: runs 4, locked 3; records 50, locked 30; 1 cells, locked 2 (missing: C2/slow-write/cpus-1)"
	if why != want {
		t.Errorf("got %q\nwant %q", why, want)
	}
	// How the advised strategy is made is part of the design.
	advised, err := LoadSpec(exptest.WriteFile(t, dir, "advised.yaml", exptest.AdvisedSpec))
	if err != nil {
		t.Fatal(err)
	}
	ad := DesignOf(advised)
	changed := advised
	a := *advised.Advise
	a.Step = 2 * time.Second
	changed.Advise = &a
	if Exploratory(Lock{Design: &ad}, advised, RulesPairedV2) != "" ||
		!strings.Contains(Exploratory(Lock{Design: &ad}, changed, RulesPairedV2), "the advise section") {
		t.Error("a changed advise section is not flagged")
	}
	if Exploratory(Lock{}, other, RulesRangeV1) != "" || !strings.Contains(Exploratory(Lock{}, spec, RulesPairedV2), "the lock records none") {
		t.Error("first rules: never exploratory; paired-v2 without a locked design: exploratory")
	}
}

// Cells in real time run at time scale 1, need a mock service of their
// own, are not calibrated, and are part of the preregistered design.
func TestRealTimeCells(t *testing.T) {
	dir := t.TempDir()
	spec, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec+"real_time:\n  - {strategies: [C2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c2 := Cell{Strategy: "C2", Scenario: "slow-write", CPU: "cpus-1"}
	c4 := Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}
	if spec.ScaleOf(c2) != 1 || spec.ScaleOf(c4) != 0.05 || !spec.NeedsScaleOne() || len(spec.RealTimeCells()) != 1 {
		t.Errorf("scales %g, %g; needs a mock at 1: %v; real-time cells %v", spec.ScaleOf(c2), spec.ScaleOf(c4), spec.NeedsScaleOne(), spec.RealTimeCells())
	}
	hs, err := LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", exptest.TinyRateHypotheses), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := CalibratedCells(spec, hs); len(got) != 1 || got[0] != c4 {
		t.Errorf("calibrated %v, want only %s (C2 runs in real time)", got, c4)
	}
	d := DesignOf(spec)
	other := spec
	other.RealTime = nil
	if why := Exploratory(Lock{Design: &d}, other, RulesPairedV3); !strings.Contains(why, "the cells that run in real time differ") {
		t.Errorf("other real-time cells: %q", why)
	}
	unscaled := spec
	unscaled.TimeScale = 1
	if unscaled.NeedsScaleOne() || len(unscaled.RealTimeCells()) != 0 {
		t.Error("an experiment at time scale 1 needs no mock service of its own for real time")
	}
}

// A scenario that restarts the mock service is not calibrated: its
// restarts act on the experiment's mock service, not on the one at time
// scale 1; one that does not restart is.
func TestRestartsAreNotCalibrated(t *testing.T) {
	dir := t.TempDir()
	h := "hypotheses:\n  - {id: P, claim: c, source: s, metric: accepted_per_second, cell: {strategy: C4, scenario: drop, cpu: cpus-1}, op: \">\", threshold: 0}\n"
	for _, tc := range []struct {
		spec       string
		calibrated int
	}{
		{exptest.PhasedSpec, 1},
		{strings.Replace(exptest.PhasedSpec, "set: {records: {workers: 6, queue: 6}}", "restart: {after: 1s, signal: KILL}", 1), 0},
	} {
		spec, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		hs, err := LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", h), spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := CalibratedCells(spec, hs); len(got) != tc.calibrated || spec.HasRestarts() != (tc.calibrated == 0) {
			t.Errorf("restarts %v: calibrated %v, want %d cells", spec.HasRestarts(), got, tc.calibrated)
		}
	}
}

// Bad phased scenarios are refused before any run, naming the file, the
// line and the field.
func TestPhasedSpecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ edit, want string }{
		{"duration: 6s\n|duration: 7s\n", "phased.drop.phases: the phases add up to 6s, not the experiment's duration of 7s"},
		{"duration: 6s\n|", "give the experiment a duration of 6s"},
		{"workers: 2, queue: 2|workers: 2, slots: 2", "phased.drop.phases.1.set: records.slots: unknown setting"},
		{"workers: 2, queue: 2|workers: 0, queue: 2", "phased.drop.phases.1.set: records.workers: 0 must be ≥ 1"},
		{"set: {records: {workers: 2, queue: 2}}|faults: [{dependency: records, kind: latency, latency: -1s}]", "phased.drop.phases.1.faults.0: latency: -1s must be ≥ 0"},
		{"set: {records: {workers: 2, queue: 2}}|faults: [{dependency: records, kind: reset, probability: 1.5}]", "probability: 1.5 must be in [0, 1]"},
		{"set: {records: {workers: 2, queue: 2}}|faults: [{dependency: geo, kind: reset}]", `"geo" is not a dependency of the lab's pipeline`},
		{"set: {records: {workers: 2, queue: 2}}|faults: [{dependency: records, kind: blackhole, direction: upstream}]", "faults.0.direction: a blackhole upstream drops requests"},
		{"set: {records: {workers: 2, queue: 2}}|restart: {after: 1s, signal: HUP}", `phased.drop.phases.1.restart.signal: "HUP" is not TERM`},
		{"set: {records: {workers: 2, queue: 2}}|restart: {after: 2s, signal: KILL}", "restart.after: 2s must be in [0, the phase's 2s)"},
		{"name: after|name: before", `phased.drop.phases.2.name: "before" is used twice`},
		{"name: after|name: drain", `other than "drain"`},
		{"scenarios: [drop]|scenarios: [dropped]", `unknown scenario "dropped"`},
		{"  drop:\n|  healthy:\n", `phased.healthy: "healthy" is a profile's name`},
		{"profile: healthy|profile: sunny", `phased.drop.profile: unknown profile "sunny"`},
	} {
		from, to, _ := strings.Cut(tc.edit, "|")
		text := strings.Replace(exptest.PhasedSpec, from, to, 1)
		if text == exptest.PhasedSpec {
			t.Fatalf("edit %q changed nothing", tc.edit)
		}
		_, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", text))
		var fe *FileError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &fe) || fe.Line == 0 {
			t.Errorf("%q: got %v, want a located error containing %q", tc.edit, err, tc.want)
		}
	}
	for _, builtin := range []string{phases.WriteCapacityDrop, phases.EnrichmentBrownout} {
		text, _, _ := strings.Cut(exptest.PhasedSpec, "phased:")
		text = strings.Replace(text, "scenarios: [drop]", "scenarios: ["+builtin+"]", 1)
		text = strings.Replace(text, "duration: 6s\n", "duration: 40s\n", 1)
		if _, err := LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", text)); err != nil {
			t.Errorf("built-in %s: %v", builtin, err)
		}
	}
}
