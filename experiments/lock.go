package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Lock is the preregistration record of a hypotheses file.
type Lock struct {
	File      string    `json:"file"`
	SHA256    string    `json:"sha256"`
	GitCommit string    `json:"git_commit,omitempty"`
	GitClean  bool      `json:"git_clean"`
	LockedAt  time.Time `json:"locked_at"`
}

// LockPath is where the lock of a hypotheses file lives.
func LockPath(hypotheses string) string {
	return strings.TrimSuffix(hypotheses, filepath.Ext(hypotheses)) + ".lock"
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Preregister writes the lock of a hypotheses file: its SHA-256 and, in a
// git repository, the commit and whether the file is committed unchanged.
func Preregister(hypotheses string, now time.Time) (Lock, error) {
	sum, err := FileSHA256(hypotheses)
	if err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	l := Lock{File: filepath.Base(hypotheses), SHA256: sum, LockedAt: now.UTC()}
	dir := filepath.Dir(hypotheses)
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
		l.GitCommit = strings.TrimSpace(string(out))
		err := exec.Command("git", "-C", dir, "diff", "--quiet", "HEAD", "--", filepath.Base(hypotheses)).Run()
		tracked := exec.Command("git", "-C", dir, "ls-files", "--error-unmatch", filepath.Base(hypotheses)).Run() == nil
		l.GitClean = err == nil && tracked
	}
	b, _ := json.MarshalIndent(l, "", "  ")
	if err := os.WriteFile(LockPath(hypotheses), append(b, '\n'), 0o644); err != nil {
		return Lock{}, fmt.Errorf("preregister: %w", err)
	}
	return l, nil
}

// ErrLockMismatch: the hypotheses file changed after it was preregistered.
var ErrLockMismatch = errors.New("hypotheses file does not match its preregistration lock")

// CheckLock verifies a hypotheses file against its lock.
func CheckLock(hypotheses string) (Lock, error) {
	var l Lock
	b, err := os.ReadFile(LockPath(hypotheses))
	if err != nil {
		return l, fmt.Errorf("%w: no lock (%v); run loadlab preregister first", ErrLockMismatch, err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("lock %s: %w", LockPath(hypotheses), err)
	}
	sum, err := FileSHA256(hypotheses)
	if err != nil {
		return l, err
	}
	if sum != l.SHA256 {
		return l, fmt.Errorf("%w: %s has SHA-256 %s, locked %s", ErrLockMismatch, hypotheses, sum[:12], l.SHA256[:min(12, len(l.SHA256))])
	}
	return l, nil
}
