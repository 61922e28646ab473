// Package atomicfile writes a file whole or not at all, the one way
// loadlab writes what it keeps (results, reports, charts, strategy files,
// the hypotheses' lock): into a file beside it, synced, renamed over it,
// then the folder synced so that the rename survives a crash too.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes b to path with permissions 0644. A full device, a kill or
// a crash leaves the file that was there (or none), never part of b. An
// error is an *fs.PathError of path (never of the file beside it), its
// cause kept: errors.Is(err, syscall.ENOSPC).
func Write(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return ofPath("open", path, err)
	}
	op := "write"
	_, err = f.Write(b)
	if err == nil {
		op, err = "sync", f.Sync()
	}
	if cerr := f.Close(); err == nil {
		op, err = "close", cerr
	}
	if err == nil {
		op, err = "chmod", os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		op, err = "rename", os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return ofPath(op, path, err)
	}
	if err := SyncDir(dir); err != nil {
		return ofPath("sync", dir, err)
	}
	return nil
}

// ofPath is err as an error of op on path: the cause of a *fs.PathError or
// *os.LinkError about the file beside path, or err itself.
func ofPath(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
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
