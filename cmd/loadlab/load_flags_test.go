package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// The libraries name fields, and a flag of a form of its own refuses a
// value as it is parsed: load and simulate name them as their flags, in
// one line, exit 2, before anything is sent.
func TestLoadAndSimulateErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--service-time", "0"}, "--service-time: 0 must be ≥ 1 s"},
		{[]string{"load", "--ramp-start", "30", "--ramp-end", "20"}, "--ramp-end: 20 is before the ramp's start 30"},
		{[]string{"load", "--max-in-flight", "-1"}, "--max-in-flight: -1 must be ≥ 0"},
		{[]string{"load", "--duration", "100000"}, "--duration: 100000 model seconds is more than the limit of 86400"},
		{[]string{"load", "--generator", "closed", "--users", "100001"}, "--users: 100001 is more than the limit of 100000"},
		{[]string{"load", "--client", "curl"}, `--client: "curl" is not net/http or fasthttp`},
		{[]string{"load", "--tie-window", "0.5"}, "--tie-window: 0.5 must be in [0, 0.5)"},
		{[]string{"simulate", "admission", "--generator", "poisson"}, `--generator: "poisson" is not open or closed`},
		{[]string{"simulate", "admission", "--think", "-1", "--generator", "closed"}, "--think: -1 must be ≥ 0"},
		{[]string{"simulate", "concurrency", "--seeds", "9-1"}, `simulate concurrency: --seeds: "9-1" ends before it starts`},
		{[]string{"simulate", "concurrency", "--limits", "0"}, `simulate concurrency: --limits: "0" is not a whole number ≥ 1`},
		{[]string{"simulate", "concurrency", "--durations", "75:80"}, `simulate concurrency: --durations: "75:80" is not WEIGHT:LO-HI`},
		{[]string{"simulate", "concurrency", "--requests", "0"}, "--requests: 0 must be ≥ 1"},
		{[]string{"simulate", "concurrency", "--real", "--seeds", "1-5000"}, "--seeds: 5000 workloads; a replay replays at most 1000"},
		{[]string{"simulate", "concurrency", "--real", "--time-scale", "0.001"}, "--time-scale: 0.001 is below 0.05"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != exitUsage || !strings.HasPrefix(msg, "loadlab: "+c.want) || strings.Contains(msg, "\n") || out.Len() != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line beginning loadlab: %s", c.args, code, msg, c.want)
		}
	}
}

// A mock service that refuses its reset is refused, naming the flag of
// its token; nothing is sent.
func TestLoadRefusedResetNamesTheToken(t *testing.T) {
	t.Parallel() // nothing is sent
	cfg := config.Default()
	cfg.AdminToken, cfg.TimeScale = "sekret", 0.05
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	var out, errb bytes.Buffer
	code := run([]string{"load", "--target", m.URL + "/enrich", "--time-scale", "0.05"}, &out, &errb)
	msg := strings.TrimSpace(errb.String())
	if code != exitUsage || !strings.HasPrefix(msg, "loadlab: loadgen: the mock service refused its reset") || !strings.HasSuffix(strings.TrimSpace(msg), "(give --admin-token)") || out.Len() != 0 {
		t.Errorf("exit %d, %q; want 2 naming --admin-token", code, msg)
	}
}

// Segment results written by an earlier loadlab (testdata/load-segments:
// two segments of an 8-second open run, its scenario the model's twelve
// keys) still merge, and the merge says the same run.
func TestMergeReadsSegmentsOfEarlierVersions(t *testing.T) {
	dir := filepath.Join("testdata", "load-segments")
	out := filepath.Join(t.TempDir(), "merged.json")
	var stdout, errb bytes.Buffer
	if code := run([]string{"merge", "--out", out, filepath.Join(dir, "seg1.json"), filepath.Join(dir, "seg0.json")}, &stdout, &errb); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res loadgen.Result
	var keys struct {
		Scenario map[string]json.RawMessage `json:"scenario"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	sc := res.Scenario
	if res.MergedSegments != 2 || res.Scheduled != 16 || res.Requests+res.Dropped+res.Behind != 16 || sc.Mode != loadgen.Open ||
		sc.Duration != 8 || sc.Workers != 8 || sc.ServiceTime != 2 || sc.Queue != 20 || sc.Timeout != 10 || len(keys.Scenario) != 12 {
		t.Errorf("merged: %d segments, %d scheduled, scenario %+v (%d keys)", res.MergedSegments, res.Scheduled, sc, len(keys.Scenario))
	}
	if !strings.Contains(stdout.String(), "Merged 2 segments into "+out+": 16 scheduled, of the schedule's 16 arrivals") {
		t.Errorf("summary:\n%s", stdout.String())
	}
}
