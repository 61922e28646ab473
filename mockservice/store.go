package mockservice

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// writeStore is the system of record's store: the ids it accepted, and
// whether each was complete. With a file it is durable: an accepted write
// is appended to the file and synced before it is acknowledged, and the
// file is replayed at start, so a restart — even a SIGKILL — keeps every
// write answered 201, and a write of an id stored before the restart is
// still a duplicate. Without a file it lives in memory only.
type writeStore struct {
	mu         sync.Mutex
	m          map[string]bool
	duplicates int
	f          *os.File // nil: in memory
	path       string
}

// storeLine is one accepted write in the file: one JSON object per line.
type storeLine struct {
	ID       string `json:"id"`
	Complete bool   `json:"complete"`
}

// StoreReplay says what opening a store file found.
type StoreReplay struct {
	Path    string
	Writes  int  // accepted writes replayed
	TornEnd bool // the last line was cut short (a crash mid-append) and ignored
}

// errStore wraps a failure to make a write durable: the write is not
// acknowledged.
var errStore = errors.New("store")

// openStore opens (or creates) the file at path and replays it; an empty
// path is an in-memory store. A torn last line is ignored and reported; a
// bad line before the last is an error (the file is not a store).
func openStore(path string) (*writeStore, StoreReplay, error) {
	s := &writeStore{m: map[string]bool{}, path: path}
	rep := StoreReplay{Path: path}
	if path == "" {
		return s, rep, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, rep, fmt.Errorf("store: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, rep, fmt.Errorf("store: %s: %w", path, err)
	}
	good := 0 // bytes of whole, valid lines
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var l storeLine
		end := good + len(sc.Bytes()) + 1
		whole := end <= len(data) && data[end-1] == '\n'
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.ID == "" || !whole {
			if end >= len(data) { // the last line: an append cut short
				rep.TornEnd = true
				break
			}
			f.Close()
			return nil, rep, fmt.Errorf("store: %s:%d: not an accepted write (%q)", path, line, sc.Text())
		}
		if _, dup := s.m[l.ID]; !dup {
			rep.Writes++
		}
		s.m[l.ID] = l.Complete
		good = end
	}
	// Cut a torn end off, so the next append starts a whole line.
	if err := f.Truncate(int64(good)); err == nil {
		_, err = f.Seek(int64(good), io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, rep, fmt.Errorf("store: %s: %w", path, err)
	}
	s.f = f
	return s, rep, nil
}

// put stores a write; new reports whether the id was new. With a file, a
// new write is appended and synced before put returns; if that fails the
// write is not stored (err wraps errStore) and must not be acknowledged.
func (s *writeStore) put(id string, complete bool) (isNew bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.m[id]; dup {
		s.duplicates++
		return false, nil
	}
	if s.f != nil {
		b, _ := json.Marshal(storeLine{ID: id, Complete: complete})
		if _, err := s.f.Write(append(b, '\n')); err != nil {
			return false, fmt.Errorf("%w: append: %v", errStore, err)
		}
		if err := s.f.Sync(); err != nil {
			return false, fmt.Errorf("%w: sync: %v", errStore, err)
		}
	}
	s.m[id] = complete
	return true, nil
}

// get reports whether id is stored, and whether complete.
func (s *writeStore) get(id string) (complete, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	complete, ok = s.m[id]
	return complete, ok
}

// counts returns the stored writes and the duplicates since the last reset.
func (s *writeStore) counts() (stored, duplicates int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m), s.duplicates
}

// reset forgets every write (the file too).
func (s *writeStore) reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m, s.duplicates = map[string]bool{}, 0
	if s.f == nil {
		return nil
	}
	if err := s.f.Truncate(0); err != nil {
		return fmt.Errorf("%w: reset: %v", errStore, err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%w: reset: %v", errStore, err)
	}
	return s.f.Sync()
}

// close closes the file, if any.
func (s *writeStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
