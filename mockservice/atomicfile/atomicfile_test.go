package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// A write replaces the file whole and leaves nothing beside it; a write
// that cannot be made leaves the file that was there and no temporary
// file, and its error names the path and keeps the cause.
func TestWriteIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := atomicfile.Write(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("read %q, %v; want %q", b, err, content)
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	missing := filepath.Join(dir, "no-such-folder", "report.md")
	err := atomicfile.Write(missing, []byte("x"))
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("into a missing folder: %v; want an error of %s (not of the file beside it) that wraps fs.ErrNotExist", err, missing)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "results.json" {
		t.Errorf("the folder holds %v; want results.json alone", entries)
	}
}
