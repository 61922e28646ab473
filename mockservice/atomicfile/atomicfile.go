// Package atomicfile writes a file whole or not at all, the one way
// loadlab writes what it keeps (results, reports, charts, strategy files,
// the hypotheses' lock): into a file beside it, synced, renamed over it,
// then the folder synced so that the rename survives a crash too.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes b to path with permissions 0644. A full device, a kill or
// a crash leaves the file that was there (or none), never part of b; the
// error names path and wraps the cause (errors.Is(err, syscall.ENOSPC)).
func Write(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// SyncDir makes the files just created or renamed in dir survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
