package mockservice

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store file keeps accepted writes across a reopen, duplicates stay
// duplicates, a torn last line is ignored and cut off, a bad line before
// the last is refused, and a reset empties the file.
func TestStoreFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store")
	s, rep, err := openStore(path)
	if err != nil || rep.Writes != 0 || rep.TornEnd {
		t.Fatalf("new store: %+v, %v", rep, err)
	}
	for _, id := range []string{"a", "b", "a"} {
		if _, err := s.put(id, id == "a"); err != nil {
			t.Fatal(err)
		}
	}
	s.close()
	// A crash mid-append leaves a torn line (never acknowledged).
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"c","compl`)
	f.Close()
	s, rep, err = openStore(path)
	if err != nil || rep.Writes != 2 || !rep.TornEnd {
		t.Fatalf("reopened: %+v, %v", rep, err)
	}
	if c, ok := s.get("a"); !ok || !c {
		t.Error("a lost or not complete")
	}
	if _, ok := s.get("c"); ok {
		t.Error("the torn write was stored")
	}
	if isNew, _ := s.put("b", false); isNew {
		t.Error("b is new again after the restart")
	}
	if isNew, err := s.put("d", true); !isNew || err != nil {
		t.Errorf("d: %v, %v", isNew, err)
	}
	s.close()
	data, _ := os.ReadFile(path)
	if want := "{\"id\":\"a\",\"complete\":true}\n{\"id\":\"b\",\"complete\":false}\n{\"id\":\"d\",\"complete\":true}\n"; string(data) != want {
		t.Errorf("file after the torn end was cut and d appended:\n%s", data)
	}
	// A bad line that is not the last: not a store.
	os.WriteFile(path, []byte("{\"id\":\"a\",\"complete\":true}\nnonsense\n{\"id\":\"b\",\"complete\":true}\n"), 0o644)
	if _, _, err := openStore(path); err == nil || !strings.Contains(err.Error(), path+":2: not an accepted write") {
		t.Errorf("bad middle line: %v", err)
	}
	os.WriteFile(path, []byte("{\"id\":\"a\",\"complete\":true}\n"), 0o644)
	s, _, _ = openStore(path)
	if err := s.reset(); err != nil {
		t.Fatal(err)
	}
	s.close()
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("reset left %q", data)
	}
	if _, _, err := openStore(filepath.Join(path, "under-a-file")); err == nil {
		t.Error("a store path that cannot be written was accepted")
	}
}
