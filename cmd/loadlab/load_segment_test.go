package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// segmentMock is the admission endpoint loadlab load starts in-process,
// served on loopback for generators in other goroutines to share.
func segmentMock(t *testing.T, scale float64) string {
	t.Helper()
	return mocktest.Start(t, mocktest.Options{Config: compare.AdmissionEndpoint(models.DefaultAdmissionScenario(), scale, loadgen.DefaultTieWindowStep)}).URL
}

// Two loadlab load --segment runs at once against one endpoint, from one
// --start-at, write their JSON; loadlab merge --out combines them into the
// whole schedule's result and prints the summary; merging one segment of
// the two, or the same twice, is refused and writes nothing.
func TestLoadSegmentsMergeCLI(t *testing.T) {
	url := segmentMock(t, 0.1)
	dir := t.TempDir()
	start := time.Now().Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	files := []string{filepath.Join(dir, "seg0.json"), filepath.Join(dir, "seg1.json")}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			var out, errb bytes.Buffer
			code := run([]string{"load", "--target", url + "/enrich", "--time-scale", "0.1", "--duration", "20",
				"--segment", []string{"0/2", "1/2"}[i], "--start-at", start, "--json"}, &out, &errb)
			if code != 0 {
				t.Errorf("segment %d/2: exit %d: %s", i, code, errb.String())
			}
			if err := os.WriteFile(files[i], out.Bytes(), 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, f := range files {
		if !loadresult.IsFile(f) {
			t.Errorf("IsFile(%s) is false", f)
		}
		b, _ := os.ReadFile(f)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"segment", "scenario", "arrivals", "target", "start_at", "latency_from_schedule_hdr", "latency_from_send_hdr"} {
			if _, ok := m[k]; !ok {
				t.Errorf("segment %d: no %q", i, k)
			}
		}
	}
	if loadresult.IsFile(dir) {
		t.Error("IsFile(a folder) is true")
	}

	merged := filepath.Join(dir, "merged.json")
	var out, errb bytes.Buffer
	if code := run([]string{"merge", "--out", merged, files[0], files[1]}, &out, &errb); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"Merged from 2 segments", "Requests ", "Merged 2 segments into " + merged} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("merge's summary has no %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	var res loadgen.Result
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	sc := models.DefaultAdmissionScenario()
	sc.Duration = 20
	total := int(loadgen.RampPacer{Schedule: compare.Schedule(sc)}.Len()) // 10 × 2 + 10 × 8
	if _, ok := keys["segment"]; ok || res.MergedSegments != 2 || res.Scheduled != total || len(res.Timeline) != 20 ||
		res.Requests+res.Dropped+res.Behind != res.Scheduled || !res.ServerJoined || res.Partial {
		t.Errorf("merged: segment key %v, merged %d, scheduled %d (want %d), requests %d + dropped %d + behind %d, %d seconds, joined %v, partial %v",
			ok, res.MergedSegments, res.Scheduled, total, res.Requests, res.Dropped, res.Behind, len(res.Timeline), res.ServerJoined, res.Partial)
	}
	// Counts, not speed: a stalled generator's arrivals are behind, and
	// still scheduled.
	t.Logf("merged: %d scheduled, %d requests, %d behind: on time %d, rejected %d, too late %d, unfinished %d", res.Scheduled,
		res.Requests, res.Behind, res.OnTime, res.Rejected, res.TooLate, res.Unfinished)

	refused := filepath.Join(dir, "refused.json")
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{files[0]}, "segment 1/2 missing"},
		{[]string{files[1], files[1]}, "segment 1/2 is given twice"},
		{[]string{files[0], merged}, merged + " is a merge of 2 segments, not a segment"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"merge", "--out", refused}, c.paths...), &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != exitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("merge %v: exit %d, %q; want 2 and one line with %q", c.paths, code, msg, c.want)
		}
		if _, err := os.Stat(refused); err == nil {
			t.Errorf("merge %v wrote %s", c.paths, refused)
		}
	}
}

// Bad --segment and --start-at input exits 2 with one line naming it, and
// sends nothing.
func TestLoadSegmentBadInput(t *testing.T) {
	t.Parallel() // nothing is sent
	url := segmentMock(t, 0.1) + "/enrich"
	soon := time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)
	past := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--segment", "3/2", "--start-at", soon, "--target", url}, `--segment "3/2": the index 3 must be in [0, 2)`},
		{[]string{"--segment", "0/0", "--start-at", soon, "--target", url}, `--segment "0/0": the count 0 must be in [1, 1000]`},
		{[]string{"--segment", "x", "--target", url}, `--segment "x" is not i/n`},
		{[]string{"--segment", "$(JOB_COMPLETION_INDEX)/2", "--target", url}, `--segment "$(JOB_COMPLETION_INDEX)/2": the index was not substituted`},
		{[]string{"--segment", "0/2", "--target", url}, "--segment 0/2 needs --start-at"},
		{[]string{"--segment", "1/2", "--start-at", soon}, "must share one target: give --target"},
		{[]string{"--segment", "1/2", "--start-at", soon, "--target", url, "--compare-model"}, "--compare-model compares the whole schedule"},
		{[]string{"--start-at", "tomorrow", "--target", url}, `--start-at: "tomorrow" is not an RFC 3339 time`},
		{[]string{"--segment", "1/2", "--start-at", past, "--target", url, "--time-scale", "0.1"}, "the start time has passed"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"load"}, c.args...), &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != exitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || out.Len() != 0 {
			t.Errorf("%v: exit %d, %q, stdout %d bytes; want 2 and one line with %q", c.args, code, msg, out.Len(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"load", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-segment") ||
		!strings.Contains(out.String(), "-start-at") || !strings.Contains(out.String(), "loadlab merge --out FILE") {
		t.Errorf("load --help: exit %d, says nothing of --segment, --start-at and merge:\n%s", code, out.String())
	}
}
