package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments"
)

// With no --file and no --hypotheses, loadlab experiment reads the
// replication built into the binary, from any directory: the same bytes
// as the repository's files, locked, and not exploratory; the results go
// under the working directory.
func TestBuiltInExperimentFromAnyDirectory(t *testing.T) {
	repo, err := filepath.Abs("../../experiments")
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(experiments.Files, "*")
	if err != nil || len(names) < 8 {
		t.Fatalf("built-in files %v (%v)", names, err)
	}
	for _, name := range names {
		built, _ := experiments.Files.ReadFile(name)
		disk, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil || !bytes.Equal(built, disk) {
			t.Errorf("built-in %s differs from experiments/%s (%v)", name, name, err)
		}
	}
	dir := t.TempDir()
	t.Chdir(dir)
	var o experimentOptions
	pe, err := o.load()
	if err != nil {
		t.Fatal(err)
	}
	if pe.file != "experiments/replication.yaml (built in)" || pe.hypotheses != "experiments/hypotheses-v5.yaml (built in)" {
		t.Errorf("files %q and %q", pe.file, pe.hypotheses)
	}
	if why := pe.Exploratory(); why != "" || len(pe.Hypotheses) != 21 || pe.SpecSHA256 == "" {
		t.Errorf("exploratory %q, %d hypotheses, experiment SHA-256 %q", why, len(pe.Hypotheses), pe.SpecSHA256)
	}
	if !strings.HasPrefix(pe.dir, "results/replication-") {
		t.Errorf("results in %q", pe.dir)
	}
	if _, err := os.Stat(filepath.Join(dir, pe.dir)); err != nil {
		t.Errorf("results folder not made ready under the working directory: %v", err)
	}
	// A file on disk is read when named, and a wrong one says which.
	o = experimentOptions{file: "nope.yaml"}
	if _, err := o.load(); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("--file nope.yaml: %v", err)
	}
}

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "loadlab ") ||
		!strings.Contains(out.String(), "go1.") || !strings.Contains(out.String(), "revision ") {
		t.Errorf("exit %d: %q %q", code, out.String(), errb.String())
	}
	if code := run([]string{"version", "extra"}, &out, &errb); code != exitUsage {
		t.Errorf("version extra: exit %d", code)
	}
}

// An experiment into a folder that holds an earlier run's results, or
// the run log of one that did not finish, refuses to replace them unless
// told to, and says how to finish the earlier one.
func TestExperimentDoesNotOverwriteResults(t *testing.T) {
	for _, file := range []string{"results.json", "run-log.jsonl"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, file), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		o := experimentOptions{out: dir}
		if _, err := o.load(); err == nil || !strings.Contains(err.Error(), "already holds the results of an earlier run ("+file+"): "+
			"loadlab experiment --resume "+dir+" finishes an interrupted run; else choose another folder, or give --force to replace them") {
			t.Errorf("%s without --force: %v", file, err)
		}
		o.force = true
		if _, err := o.load(); err != nil {
			t.Errorf("%s with --force: %v", file, err)
		}
	}
}
