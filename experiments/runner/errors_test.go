package runner

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// fullDisk is a journal on a device with no space left.
type fullDisk struct{}

func (fullDisk) Begin(*resultsfile.Results) error {
	return &fs.PathError{Op: "write", Path: "runs.jsonl", Err: syscall.ENOSPC}
}
func (fullDisk) Advised(map[string]*resultsfile.AdvisedStrategy) error { return nil }
func (fullDisk) Run(resultsfile.RunRecord) error                       { return nil }
func (fullDisk) Twin(resultsfile.RunRecord) error                      { return nil }

// An error that stops an experiment keeps its cause for errors.Is: a full
// device is told apart from a folder gone, and an experiment file that
// cannot be read for its SHA-256 stops the experiment rather than leaving
// an empty digest for a resume to compare.
func TestStoppingErrorsKeepTheirCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	t.Run("a full device", func(t *testing.T) {
		r := mustNew(t, Config{Spec: spec, Target: url, MockConfig: *mockCfg, Journal: fullDisk{}}, heard{})
		_, err := r.Run(context.Background())
		if !errors.Is(err, ErrJournal) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("got %v; want ErrJournal wrapping ENOSPC", err)
		}
	})
	t.Run("an experiment file gone", func(t *testing.T) {
		r := mustNew(t, Config{Spec: spec, Target: url, MockConfig: *mockCfg,
			ExperimentFile: filepath.Join(dir, "gone.yaml")}, heard{})
		_, err := r.Run(context.Background())
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v; want the missing file's error", err)
		}
	})
}
