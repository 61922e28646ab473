package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// adviseProbes writes probes of the lab's two dependencies, as loadlab
// probe --json writes them: enrichment without a knee up to 64, records
// with its knee at 6 and rejections from 13.
func adviseProbes(t *testing.T, dir string) (enrich, rec string) {
	t.Helper()
	write := func(name string, service float64, knee, rejections any, max int, plateau float64) string {
		var steps []map[string]any
		for c := 1; c <= max; c++ {
			steps = append(steps, map[string]any{"concurrency": c, "ok_per_second": min(float64(c)/service, plateau)})
		}
		data, err := json.Marshal(map[string]any{"service_time_seconds": service, "knee": knee, "rejections_begin_at": rejections,
			"steps": steps, "plan": map[string]any{"target": "http://127.0.0.1:8080/" + name}})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	return write("enrich", 0.12, nil, nil, 64, 1e9), write("records", 0.03, 6, 13, 13, 200)
}

// Bad input exits 2 with one line naming the flag.
func TestAdviseBadInputExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	enrich, rec := adviseProbes(t, dir)
	none := filepath.Join(dir, "none.json")
	probes := []string{"--probe", "enrichment=" + enrich, "--probe", "records=" + rec}
	for _, tc := range []struct {
		args []string
		want string // the whole line on stderr
	}{
		{nil, "advise: --probe: none given (one per dependency: enrichment, records)"},
		{[]string{"--probe", "enrichment=" + enrich}, `advise: no probe of dependency "records"`},
		{[]string{"--probe", "enrichment=" + none, "--probe", "records=" + rec}, "advise: --probe enrichment: open " + none + ": no such file or directory"},
		{[]string{"--probe", "enrichment=" + enrich, "--probe", "records=" + os.Args[0]}, "advise: --probe records: " + os.Args[0] + " is not a probe's JSON: "},
		{[]string{"--probe", "enrichment"}, `advise: invalid value "enrichment" for flag -probe: "enrichment" is not DEPENDENCY=FILE`},
		{append(probes, "--pipeline", none), "advise: --pipeline: " + none + ": open " + none + ": no such file or directory"},
		{append(probes, "--target-rate", "-1"), "advise: target rate -1 must be ≥ 0 (0: as fast as the bottleneck allows)"},
		{append(probes, "--out", filepath.Join(os.Args[0], "x")), "advise: --out: open " + filepath.Join(os.Args[0], "x") + ": not a directory"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"advise"}, tc.args...), &out, &errb)
		msg := strings.TrimSuffix(errb.String(), "\n")
		if code != exitUsage || !strings.HasPrefix(msg, "loadlab: "+tc.want) || strings.Contains(msg, "\n") || out.Len() != 0 {
			t.Errorf("%v: exit %d, %q, stdout %q; want 2 and %q", tc.args, code, msg, out.String(), tc.want)
		}
	}
}

// With --out the file is written and a summary printed; without it the
// file is printed.
func TestAdviseWritesTheStrategyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	enrich, rec := adviseProbes(t, dir)
	file := filepath.Join(dir, "advised.yaml")
	var out, errb bytes.Buffer
	code := run([]string{"advise", "--probe", "enrichment=" + enrich, "--probe", "records=" + rec, "--target-rate", "150", "--name", "mine", "--out", file}, &out, &errb)
	written, err := os.ReadFile(file)
	if code != 0 || err != nil || !strings.Contains(string(written), "\nstrategy:\n    name: mine\n    records_in_flight: 59\n") ||
		!strings.HasPrefix(out.String(), "Wrote "+file+": strategy mine, 59 records in flight, permits enrichment=64, records=6\n") {
		t.Fatalf("exit %d (%s, %v): stdout %q, file:\n%s", code, errb.String(), err, out.String(), written)
	}
	out.Reset()
	if code := run([]string{"advise", "--probe", "enrichment=" + enrich, "--probe", "records=" + rec, "--target-rate", "150", "--name", "mine"}, &out, &errb); code != 0 ||
		!strings.HasPrefix(out.String(), "# Written by loadlab advise at ") || !strings.Contains(out.String(), string(written[strings.Index(string(written), "\nstrategy:"):])) {
		t.Errorf("exit %d: printed %q, want the file", code, out.String())
	}
}
