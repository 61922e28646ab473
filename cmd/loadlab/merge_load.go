package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/client/loadgen"
)

// isLoadResult reports whether path is a file holding the JSON result of
// loadlab load --segment i/n --json: a regular file whose top-level object
// has a "segment" key (a load result's first) — or a "scheduled" key, a
// whole load's result, which mergeLoad then refuses by name. It reads the
// object's keys only up to the answer: a --json-lines log of loadlab
// experiment begins {"kind": and is not one.
func isLoadResult(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case "segment", "scheduled":
			return true
		case "kind": // a line of a --json-lines log
			return false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// mergeLoad merges the segments of one load into one result at out: the
// JSON of loadlab load --json, written whole or not at all, and the summary
// for people on stdout.
func mergeLoad(paths []string, out string, stdout io.Writer) error {
	var segs []loadgen.Result
	var names []string
	for _, p := range paths {
		r, err := readLoadResult(p)
		if err != nil {
			return usageErr("merge: %v", err)
		}
		if r.Segment == nil {
			what := "a whole run's result"
			if r.MergedSegments > 0 {
				what = fmt.Sprintf("a merge of %d segments", r.MergedSegments)
			}
			return usageErr("merge: %s is %s, not a segment (loadlab load --segment i/n --json)", p, what)
		}
		segs = append(segs, r)
		names = append(names, fmt.Sprintf("%s: segment %s", p, r.Segment))
	}
	merged, err := loadgen.Merge(segs)
	if me, ok := errors.AsType[*loadgen.MergeError](err); ok {
		return usageErr("merge: %v (%s)", mergeHint(me.Err), strings.Join(names, ", "))
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, merged); err != nil {
		return err
	}
	if err := writeFileWhole(out, buf.Bytes()); err != nil {
		return usageErr("merge: --out: %v", err)
	}
	if err := loadgen.WriteResult(stdout, merged); err != nil {
		return err
	}
	sc := merged.Scenario.Schedule
	of := fmt.Sprintf("%d users", sc.Users)
	if sc.Mode == loadgen.Open {
		of = fmt.Sprintf("the schedule's %s arrivals", scheduledTotal(sc, loadgen.Segment{}))
	}
	fmt.Fprintf(stdout, "\nMerged %d segments into %s: %d scheduled, of %s\n", len(segs), out, merged.Scheduled, of)
	return nil
}

// readLoadResult reads one segment's --json output (a result, perhaps with
// "model" beside it, which is ignored).
func readLoadResult(path string) (loadgen.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return loadgen.Result{}, err
	}
	var r loadgen.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return loadgen.Result{}, fmt.Errorf("%s is not the JSON of loadlab load --json: %v", path, err)
	}
	return r, nil
}

// writeFileWhole writes b to path through a temporary file in the same
// folder, renamed over it: path holds all of b or is left as it was.
func writeFileWhole(path string, b []byte) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder: a merged load is a file", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".loadlab-merge-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
