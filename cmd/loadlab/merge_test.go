package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// skipChildren skips a test that runs loadlab in child processes under
// -short (the fast loop; make test runs them).
func skipChildren(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs loadlab as child processes; make test runs it")
	}
}

// loadlabChild runs this test binary as loadlab with args and returns its
// exit code, stdout and stderr.
func loadlabChild(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	skipChildren(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOADLAB_RUN_MAIN=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// Two shards of a tiny matrix, run side by side by two loadlab processes
// (each with its own in-process mock service), one writing a folder and
// one JSON lines; loadlab merge combines them, from the folders, a folder
// of folders or the log, into the whole matrix with its verdicts.
func TestShardAndMergeCLI(t *testing.T) {
	skipChildren(t) // (also in loadlabChild, but that runs in goroutines here)
	t.Parallel()    // child processes that check counts and verdicts, not speed
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 3)
	shards := filepath.Join(dir, "shards")
	var wg sync.WaitGroup
	var outs [2]string
	var codes [2]int
	for i := range 2 {
		wg.Go(func() {
			args := []string{"experiment", "--file", spec, "--hypotheses", hyp,
				"--shard", []string{"0/2", "1/2"}[i], "--out", filepath.Join(shards, []string{"0", "1"}[i])}
			if i == 1 {
				args = append(args, "--json-lines")
			}
			var errb string
			codes[i], outs[i], errb = loadlabChild(t, args...)
			if codes[i] != 0 {
				t.Errorf("shard %d: exit %d: %s", i, codes[i], errb)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// The JSON lines: a line per run, then the results, nothing else.
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(outs[1]))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var line struct {
			Kind  string `json:"kind"`
			Shard string `json:"shard"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Shard != "1/2" {
			t.Fatalf("line %q: %v", sc.Text()[:min(80, len(sc.Text()))], err)
		}
		kinds = append(kinds, line.Kind)
	}
	part, err := resultsfile.ReadResults(filepath.Join(shards, "1", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != len(part.Runs)+1 || kinds[len(kinds)-1] != "results" || part.Shard == nil || part.Shard.Index != 1 {
		t.Errorf("json lines %v for %d runs; shard %+v", kinds, len(part.Runs), part.Shard)
	}
	md, _ := os.ReadFile(filepath.Join(shards, "1", "report.md"))
	if !strings.Contains(string(md), "PARTIAL: shard 1/2, ") {
		t.Errorf("the shard's report does not say it is partial:\n%.400s", md)
	}
	var cout, cerr bytes.Buffer
	if code := run([]string{"check", filepath.Join(shards, "1")}, &cout, &cerr); code != 0 || !strings.Contains(cout.String(), "PARTIAL: shard 1/2, ") {
		t.Errorf("check of a shard: exit %d: %s%s", code, cout.String(), cerr.String())
	}
	log := filepath.Join(dir, "shard-1.log")
	if err := os.WriteFile(log, []byte("loadlab experiment: progress on stderr\n"+outs[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		out  string
	}{
		{"folders", []string{"merge", "--out", filepath.Join(dir, "m1"), filepath.Join(shards, "1"), filepath.Join(shards, "0")}, "m1"},
		{"folder of folders", []string{"merge", shards, "--out", filepath.Join(dir, "m2")}, "m2"},
		{"folder and log", []string{"merge", "--out", filepath.Join(dir, "m3"), filepath.Join(shards, "0"), log}, "m3"},
	} {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != 0 || !strings.Contains(out.String(), "Merged 2 shards (6 runs)") {
			t.Errorf("%s: exit %d: %s%s", tt.name, code, out.String(), errb.String())
			continue
		}
		res, err := resultsfile.ReadResults(filepath.Join(dir, tt.out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Shard != nil || len(res.Shards) != 2 || len(res.Runs) != 6 || len(res.Verdicts) != 1 || res.Verdicts[0].Verdict != resultsfile.Supported {
			t.Errorf("%s: shard %v, %d shards, %d runs, verdicts %+v", tt.name, res.Shard, len(res.Shards), len(res.Runs), res.Verdicts)
		}
		md, _ := os.ReadFile(filepath.Join(dir, tt.out, "report.md"))
		if strings.Contains(string(md), "PARTIAL") || !strings.Contains(string(md), "Merged from 2 shards") {
			t.Errorf("%s: the merged report:\n%.600s", tt.name, md)
		}
	}
	// What cannot be merged exits 2, naming why, and writes nothing.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--out", filepath.Join(dir, "x"), filepath.Join(shards, "0")}, "missing shard(s) 1/2"},
		{[]string{"merge", "--out", filepath.Join(dir, "x"), filepath.Join(shards, "0"), filepath.Join(shards, "0"), filepath.Join(shards, "1")}, "shard 0/2 given twice"},
		{[]string{"merge", "--out", filepath.Join(dir, "x"), filepath.Join(dir, "m1"), filepath.Join(shards, "1")}, "is not a shard's partial results: it names no shard of the matrix (loadlab experiment --shard i/n writes them)"},
		{[]string{"merge", filepath.Join(shards, "0")}, "--out DIR is required"},
		{[]string{"merge", "--out", filepath.Join(dir, "x")}, "which partial results?"},
		{[]string{"merge", "--out", filepath.Join(dir, "x"), filepath.Join(dir, "spec.yaml")}, "no results line ({\"kind\":\"results\",...}): is it an experiment's JSON-lines log, and did the experiment end? (loadlab experiment --json-lines writes one)"},
	} {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", tt.args, code, errb.String(), tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a refused merge wrote %s", filepath.Join(dir, "x"))
	}
}

// Bad --shard values, and an --out that cannot be written, exit 2 before
// any run.
func TestShardBadInput(t *testing.T) {
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 3)
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--shard", "3/2"}, "--shard \"3/2\": the index 3 must be in [0, 2)"},
		{[]string{"--shard", "0/0"}, "the count 0 must be in [1, 1000]"},
		{[]string{"--shard", "$(JOB_COMPLETION_INDEX)/2"}, "the index was not substituted"},
		{[]string{"--out", filepath.Join(file, "out")}, "--out: " + filepath.Join(file, "out") + " cannot be created"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"experiment", "--file", spec, "--hypotheses", hyp, "--out", filepath.Join(dir, "out")}, tt.extra...)
		if code := run(args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", tt.extra, code, errb.String(), tt.want)
		}
	}
	// A shard does not write over an earlier run's results.
	stale := filepath.Join(dir, "stale")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "results.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var so, se bytes.Buffer
	if code := run([]string{"experiment", "--file", spec, "--hypotheses", hyp, "--shard", "0/2", "--out", stale}, &so, &se); code != exitUsage || !strings.Contains(se.String(), "already holds the results of an earlier run (results.json): a shard writes into an empty folder") {
		t.Errorf("a shard into a used folder: exit %d, %q", code, se.String())
	}
	// The advised cells' probes would differ by machine: no split.
	var out, errb bytes.Buffer
	if code := run([]string{"experiment", "--file", "../../experiments/replication.yaml", "--hypotheses", "../../experiments/hypotheses-v5.yaml", "--shard", "0/2"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "experiment: --shard: 0/2: the matrix cannot be split: the advised cells") {
		t.Errorf("replication.yaml in shards: exit %d, %q", code, errb.String())
	}
}
