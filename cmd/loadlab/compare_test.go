package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadlab compare on real runs against the mock service: five runs of C4
// under slow writes compared with five more of the same exit 0; with five
// whose write budget is halved (--permits records=3: 3 of the 6 write
// workers used, so the accepted rate about halves) exit 99 naming the
// accepted rate. The three sets are run interleaved, one run of each in
// turn, the order rotated each round so that none always follows another,
// and a machine that slows down (or a run that leaves work behind for the
// next) weighs on all three alike. Real runs spread by several percent, so
// the same configuration is compared at a minimum effect of 20%, which
// the halved rate exceeds many times over. In real time (time scale 1),
// so that the write budget bounds the rate at 40 and 20 records a second,
// a client's work even under -race beside other tests: at time scale 0.1
// the same runs asked 400 writes a second of a client that, starved,
// became the bottleneck (C4 17.8 against half 12.8, not called). The
// runs share one mock service of the test's own.
func TestCompareRealRuns(t *testing.T) {
	t.Parallel() // the write budget bounds the rates, not this machine's speed
	url := startMock(t, 1)
	dir := t.TempDir()
	sets := map[string][]string{"before": nil, "same": nil, "half": {"--permits", "records=3"}}
	order := []string{"before", "same", "half"}
	for i := range 5 {
		for k := range order {
			name := order[(i+k)%len(order)]
			var out, errb bytes.Buffer
			args := append([]string{"run", "--target", url, "--time-scale", "1", "--profile", "slow-write", "--records", "40",
				"--call-timeout", "20s", "--permit-timeout", "100s", "--json"}, sets[name]...)
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("%s run %d: exit %d: %s", name, i+1, code, errb.String())
			}
			if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name, fmt.Sprintf("run-%d.json", i+1)), out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	compare := func(after string, extra ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"compare", filepath.Join(dir, "before"), filepath.Join(dir, after)}, extra...), &out, &errb)
		t.Logf("compare before %s: exit %d\n%s%s", after, code, out.String(), errb.String())
		return code, out.String(), errb.String()
	}
	if code, out, _ := compare("same", "--min-effect", "20%"); code != 0 || !strings.Contains(out, "no regression") {
		t.Errorf("C4 against C4 at a minimum effect of 20%%: exit %d, want 0", code)
	}
	code, out, errs := compare("half")
	if code != 99 || !strings.Contains(errs, "accepted_per_second in C4") || !strings.Contains(out, "changed: strategy.permits.records: 6 → 3") {
		t.Errorf("C4 against half its write budget: exit %d, want 99 naming accepted_per_second in C4", code)
	}
	// The same in JSON: the accepted rate's figures, each with its unit.
	var res struct {
		Report struct {
			Rows []struct {
				Metric   struct{ Name, Unit string }
				Before   struct{ Median float64 }
				After    struct{ Median float64 }
				Estimate *float64
				Decision string
			}
		}
	}
	var js, errb bytes.Buffer
	run([]string{"compare", filepath.Join(dir, "before"), filepath.Join(dir, "half"), "--json", "--metric", "accepted_per_second"}, &js, &errb)
	if err := json.Unmarshal(js.Bytes(), &res); err != nil || len(res.Report.Rows) != 1 {
		t.Fatalf("--json: %v: %s", err, js.String())
	}
	r := res.Report.Rows[0]
	if r.Decision != "worse" || r.Metric.Unit != "records/lab s" || r.Estimate == nil || *r.Estimate > 0.75 {
		t.Errorf("accepted rate: %+v", r)
	}
}
