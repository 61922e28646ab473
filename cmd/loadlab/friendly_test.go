package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shopPipeline is a pipeline of one's own (no enrichment, no records):
// cliPipeline under the name shop.
var shopPipeline = strings.Replace(cliPipeline, "name: two", "name: shop", 1)

// Errors that point: each names the flag or the file and says the fix,
// with exit 2 and nothing sent (the targets here accept no connection).
func TestErrorsSayTheFix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shop := filepath.Join(dir, "shop.yaml")
	if err := os.WriteFile(shop, []byte(shopPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	enrich, rec := adviseProbes(t, dir)
	dead := "http://127.0.0.1:1"
	// The same pipeline with its lookup service at an address of its own,
	// where nothing listens.
	down := filepath.Join(dir, "down.yaml")
	if err := os.WriteFile(down, []byte(strings.Replace(shopPipeline, "path: /enrich", "base_url: "+dead+"\n    path: /enrich", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mock := startMock(t, 0.05)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// A pipeline of one's own and no strategy: refused, with the way to one.
		{[]string{"run", "--target", dead, "--pipeline", shop}, "run: --pipeline " + shop + ": which strategy? Nothing bounds the calls to your services unless you say how: " +
			"probe each dependency and let advise size the budgets"},
		{[]string{"run", "--target", dead, "--pipeline", shop}, "or give budgets, --permits lookup=N,ledger=N; or --strategy C2 (32 records in flight, no budget: it can overload them)"},
		{[]string{"run", "--target", dead, "--pipeline", shop, "--strategy", "C4"}, "run: --strategy C4: its budgets are the lab's, for enrichment and records; " +
			"pipeline shop has lookup, ledger: give budgets for those with --permits lookup=N,ledger=N"},
		// A dependency of one's own that is down: refused before any record begins.
		{[]string{"run", "--target", mock, "--pipeline", down, "--permits", "lookup=2,ledger=2", "--time-scale", "0.05", "--call-timeout", "200s"},
			"run: target unreachable: dependency lookup at " + dead + " accepts no connection: dial tcp 127.0.0.1:1: connect: connection refused (is it running?"},
		// So is one that --call-url sends elsewhere.
		{[]string{"run", "--target", mock, "--pipeline", shop, "--permits", "lookup=2,ledger=2", "--time-scale", "0.05", "--call-timeout", "200s", "--call-url", "ledger=" + dead},
			"run: target unreachable: dependency ledger at " + dead + " accepts no connection: dial tcp 127.0.0.1:1: connect: connection refused (is it running?"},
		{[]string{"run", "--target", "127.0.0.1:9101"}, `run: --target "127.0.0.1:9101" has no scheme: did you mean http://127.0.0.1:9101?`},
		{[]string{"load", "--target", "localhost:9101/x"}, `load: --target "localhost:9101/x" has no scheme: did you mean http://localhost:9101/x?`},
		{[]string{"probe", "--target", "127.0.0.1:9101/geo"}, `probe: --target "127.0.0.1:9101/geo" has no scheme`},
		{[]string{"probe", "--target", dead + "/geo?id={{.ID}}"}, "a template in the URL is sent as is, not expanded (templates work in --body, and in a pipeline's paths)"},
		{[]string{"experiment", "--target", "127.0.0.1:8080"}, `experiment: --target "127.0.0.1:8080" has no scheme`},
		{[]string{"experiment", "--real-time-target", "mock1:8080"}, `experiment: --real-time-target "mock1:8080" has no scheme`},
		{[]string{"run", "--recods", "10"}, "run: flag provided but not defined: -recods; did you mean --records?"},
		{[]string{"probe", "--concurency", "1-4"}, "did you mean --concurrency?"},
		{[]string{"experment"}, `unknown command "experment"; did you mean "experiment"? (see loadlab --help)`},
		{[]string{"run", "--target", dead, "--strategy-file", "nope.yaml"}, "run: --strategy-file: nope.yaml: open nope.yaml: no such file or directory"},
		{[]string{"run", "--threshold", "rejectd<1%"}, `"rejectd<1%": no figure "rejectd" (did you mean rejected?)`},
		{[]string{"load", "--threshold", "p99_ms<<3"}, `"<3" is not a number`},
		// Probes of one's own services given without the pipeline they are of.
		{[]string{"advise", "--probe", "lookup=" + enrich, "--probe", "ledger=" + rec}, `advise: no probe of dependency "enrichment" of pipeline lab ` +
			"(its dependencies: enrichment, records); the probes of ledger, lookup are of none of them: give your pipeline with --pipeline FILE"},
		// A probe given to one's own pipeline under a misspelled name.
		{[]string{"advise", "--pipeline", shop, "--probe", "lookup=" + enrich, "--probe", "ledgr=" + rec}, `advise: no probe of dependency "ledger" of pipeline shop ` +
			"(its dependencies: lookup, ledger); --probe ledgr=… (did you mean ledger?) names none of them"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// A run that breaches a threshold exits 99 naming each breach and its
// measured value; one that holds them all exits 0, each printed.
func TestThresholdsExitNinetyNine(t *testing.T) {
	url := startMock(t, 0.05)
	base := []string{"run", "--target", url, "--strategy", "C4", "--records", "40", "--time-scale", "0.05", "--call-timeout", "200s"}
	var out, errb bytes.Buffer
	if code := run(append(base, "--threshold", "write_unknown==0,rejected<=100%", "--threshold", "complete>=1"), &out, &errb); code != 0 {
		t.Fatalf("held: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"threshold write_unknown==0: measured 0, held\n", "threshold complete>=1: measured 40, held\n", "Accepted 40 of 40 records (100%: 40 complete, 0 incomplete)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	code := run(append(base, "--threshold", "accepted_per_second>1e9,write_unknown==0"), &out, &errb)
	if code != 99 || !strings.HasPrefix(errb.String(), "loadlab: run: 1 of 2 thresholds breached: accepted_per_second>1e9: measured ") ||
		!strings.HasSuffix(errb.String(), ", BREACHED\n") {
		t.Errorf("breached: exit %d, %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"load", "--time-scale", "0.02", "--duration", "5", "--threshold", "on_time>=0%", "--threshold", "p99_ms<0"}, &out, &errb)
	if code != 99 || !strings.Contains(errb.String(), "load: 1 of 2 thresholds breached: p99_ms<0: measured ") ||
		!strings.Contains(out.String(), "threshold on_time>=0%: measured ") {
		t.Errorf("load: exit %d, %q\n%s", code, errb.String(), out.String())
	}
}

// A target that accepts no connection is named as the run's, with what to
// do, and a probe that failed at once prints no step of zeros before it.
func TestUnreachableTargetsSayWhatToDo(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--target", "http://127.0.0.1:1", "--records", "1"}, &out, &errb); code != exitUsage ||
		!strings.HasPrefix(errb.String(), "loadlab: run: target unreachable: ") || !strings.Contains(errb.String(), "(is it running? --wait 10s waits for one that is starting)") {
		t.Errorf("run: exit %d, %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	// A step long enough for its first 20 requests, refused however slowly
	// beside other work: the probe gives up after them, not at the step's end.
	code := run([]string{"probe", "--target", "http://127.0.0.1:1/x", "--concurrency", "1-2", "--warm-up", "0s", "--step", "5s"}, &out, &errb)
	if code != exitUsage || strings.Contains(out.String(), "concurrency   1:") || !strings.Contains(errb.String(), "its first 20 requests failed") {
		t.Errorf("probe: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
