package faults_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// run processes n records one at a time against the mock service through
// a proxy per dependency carrying fs.
func run(t *testing.T, m *mocktest.Mock, n int, fs ...faults.Fault) records.Result {
	t.Helper()
	p, err := faults.Start(map[string]string{api.Enrichment: m.URL, api.Records: m.URL}, fs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	cfg := records.DefaultConfig()
	cfg.Target, cfg.Records, cfg.TimeScale, cfg.CallURLs = m.URL, n, 0.1, p.URLs
	cfg.RunID = "f" + strings.ReplaceAll(t.Name(), "/", "-") + "-"
	cfg.Strategy, _ = strategy.Parse("sequential")
	cfg.Reset = true
	for _, f := range fs {
		if f.Kind == faults.Latency {
			// The call timeout far beyond the latency added (2 s real
			// for 150 ms): a stall of this machine can make a call
			// slower, and this test is about the latency, not the
			// timeout (the blackhole's run keeps the lab's 2 lab s).
			cfg.CallTimeout = 20 * time.Second
		}
	}
	res, err := records.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Each fault changes what the client measures, on the real mock service:
// latency on the writes adds to every record; resets on enrichment make
// every enrichment call an error and every record incomplete; a blackhole
// on the writes makes every write a call timeout of unknown outcome.
func TestEachFaultChangesWhatTheClientMeasures(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.1
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	const n = 8
	base := run(t, m, n)
	if base.Complete != n || base.Errors != 0 {
		t.Fatalf("through proxies without faults: %+v", base)
	}
	slow := run(t, m, n, faults.Fault{Dependency: api.Records, Kind: faults.Latency, Latency: 150 * time.Millisecond})
	// One record at a time, each write held 150 ms by the proxy: the run
	// takes at least n × 150 ms whatever the host does (a stall only adds
	// time), where without the fault it takes the mock's own service
	// times, about a third of that (the base run, logged below).
	if slow.Complete != n || slow.DurationSeconds < n*0.150 {
		t.Errorf("150 ms on each of %d sequential writes: the run took %.3f s (%d complete), want ≥ %.3f", n, slow.DurationSeconds, slow.Complete, n*0.150)
	}
	reset := run(t, m, n, faults.Fault{Dependency: api.Enrichment, Kind: faults.Reset})
	if reset.Incomplete != n || reset.Calls[api.Enrichment]["error"] != n || reset.Calls[api.Records]["ok"] != n {
		t.Errorf("resets on enrichment: %d incomplete, calls %v; kinds %v", reset.Incomplete, reset.Calls, reset.ErrorKinds)
	}
	hole := run(t, m, n, faults.Fault{Dependency: api.Records, Kind: faults.Blackhole})
	if hole.WriteUnknown != n || hole.CallTimeouts != n || hole.Calls[api.Enrichment]["ok"] != 3*n {
		t.Errorf("blackhole on writes: %d unknown, %d call timeouts, calls %v", hole.WriteUnknown, hole.CallTimeouts, hole.Calls)
	}
	t.Logf("base %.3f s; +150 ms writes %.3f s; resets: %v; blackhole: %d call timeouts", base.DurationSeconds, slow.DurationSeconds, reset.ErrorKinds, hole.CallTimeouts)
}

// A faults file's errors name the file, the line and the field; a fault
// for a dependency the proxies do not front is refused.
func TestFaultsFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"faults:\n  - dependency: records\n    kind: latency\n    latency: -5ms\n", "f.yaml:4: faults.0.latency: -5ms must be ≥ 0"},
		{"faults:\n  - dependency: records\n    kind: reset\n    probability: 1.5\n", "f.yaml:4: faults.0.probability: 1.5 must be in [0, 1]"},
		{"faults:\n  - dependency: records\n    kind: lag\n", "f.yaml:3: faults.0.kind: \"lag\" is not one of"},
		{"faults:\n  - kind: reset\n", "faults.0.dependency: missing"},
		{"faults:\n  - dependency: records\n    kind: bandwidth\n", "faults.0.rate_kbps: 0 must be > 0"},
	} {
		f := filepath.Join(dir, "f.yaml")
		os.WriteFile(f, []byte(c.text), 0o644)
		if _, err := faults.Load(f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := faults.Start(map[string]string{"records": "http://127.0.0.1:1"}, []faults.Fault{{Dependency: "geo", Kind: faults.Reset}}); err == nil {
		t.Error("a fault for a dependency not fronted was accepted")
	}
}

// Set changes the faults of running proxies: resets set live on the
// writes turn every following write into an error, and clearing them
// lets writes through again, on the same proxies.
func TestSetChangesFaultsLive(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.1
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	p, err := faults.Start(map[string]string{api.Enrichment: m.URL, api.Records: m.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	batch := func(name string) records.Result {
		t.Helper()
		rc := records.DefaultConfig()
		rc.Target, rc.Records, rc.TimeScale, rc.CallURLs = m.URL, 4, 0.1, p.URLs
		rc.RunID, rc.Reset = "set-"+name+"-", false
		rc.Strategy, _ = strategy.Parse("sequential")
		res, err := records.Run(context.Background(), rc)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := batch("before"); r.Complete != 4 {
		t.Fatalf("no faults: %+v", r)
	}
	if err := p.Set([]faults.Fault{{Dependency: api.Records, Kind: faults.Reset}}); err != nil {
		t.Fatal(err)
	}
	if r := batch("reset"); r.Calls[api.Records]["error"] != 4 || r.Complete != 0 {
		t.Errorf("resets on writes set live: write calls %v, %d complete", r.Calls[api.Records], r.Complete)
	}
	if len(p.Faults) != 1 {
		t.Errorf("faults in force: %v", p.Faults)
	}
	if err := p.Set(nil); err != nil {
		t.Fatal(err)
	}
	if r := batch("after"); r.Complete != 4 {
		t.Errorf("faults cleared: %+v", r)
	}
	if err := p.Set([]faults.Fault{{Dependency: "ledger", Kind: faults.Reset}}); err == nil {
		t.Error("a fault for a dependency the proxies do not front was accepted")
	}
}

// A fault's kind and direction read and write as the faults file's text;
// Validate names the bad field.
func TestKindsAndDirections(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f.yaml")
	os.WriteFile(f, []byte("faults:\n  - dependency: records\n    kind: slow_close\n    after: 1s\n    direction: upstream\n"), 0o644)
	fs, err := faults.Load(f)
	if err != nil || len(fs) != 1 || fs[0].Kind != faults.SlowClose || fs[0].Direction != faults.Upstream {
		t.Fatalf("loaded %+v, %v", fs, err)
	}
	b, err := json.Marshal(faults.Fault{Dependency: "records", Kind: faults.Blackhole, Direction: faults.Downstream})
	if want := `{"dependency":"records","kind":"blackhole","direction":"downstream"}`; err != nil || string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	for name, ft := range map[string]faults.Fault{
		"dependency":  {Kind: faults.Reset},
		"kind":        {Dependency: "records", Kind: "lag"},
		"jitter":      {Dependency: "records", Kind: faults.Latency, Latency: time.Millisecond, Jitter: time.Second},
		"rate_kbps":   {Dependency: "records", Kind: faults.Bandwidth},
		"direction":   {Dependency: "records", Kind: faults.Reset, Direction: "sideways"},
		"probability": {Dependency: "records", Kind: faults.Reset, Probability: 2},
	} {
		err := ft.Validate()
		if fe, ok := field.Of(err); !ok || fe.Field != name || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%+v: %v, want an error naming %s", ft, err, name)
		}
	}
	if err := (faults.Fault{Dependency: "records", Kind: faults.Reset, Direction: faults.Upstream}).Validate(); err != nil {
		t.Errorf("an upstream reset: %v", err)
	}
}
