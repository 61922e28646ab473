package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// mergeLoad merges the segments of one load into one result at out: the
// JSON of loadlab load --json, written whole or not at all, and the summary
// for people on stdout.
func mergeLoad(paths []string, out string, stdout io.Writer) error {
	var segs []loadgen.Result
	var names []string
	for _, p := range paths {
		r, err := loadresult.ReadFile(p)
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
	merged, err := loadresult.Merge(segs)
	if me, ok := errors.AsType[*loadresult.MergeError](err); ok {
		return usageErr("merge: %v (%s)", mergeHint(me.Err), strings.Join(names, ", "))
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, merged); err != nil {
		return err
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageErr("merge: --out: %s is a folder: a merged load is a file", out)
	}
	if err := atomicfile.Write(out, buf.Bytes()); err != nil {
		return usageErr("merge: --out: %v", err)
	}
	if err := loadresult.WriteResult(stdout, merged); err != nil {
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
