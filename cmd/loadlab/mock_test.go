package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// probeFile is the JSON of a probe, on a fake clock, of a service written
// here: workers serving 50 ms each, slots waiting, 503 beyond; concurrency
// 1 to max, short steps.
func probeFile(t *testing.T, workers, slots, max int) string {
	t.Helper()
	var r probe.Result
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		inside := 0
		free := make(chan struct{}, workers)
		for range workers {
			free <- struct{}{}
		}
		url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			if inside >= workers+slots {
				mu.Unlock()
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			inside++
			mu.Unlock()
			<-free
			time.Sleep(50 * time.Millisecond)
			free <- struct{}{}
			mu.Lock()
			inside--
			mu.Unlock()
		}))
		cfg := probe.Default()
		cfg.Target, cfg.Dial, cfg.Method, cfg.MaxConcurrency = url+"/ledger", dial, http.MethodPost, max
		cfg.Step, cfg.WarmUp = 600*time.Millisecond, 150*time.Millisecond
		var err error
		if r, err = probe.Run(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
	})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadlab mock --check serves a copy fitted from a probe, probes it as the
// original was on loopback, and finds it faithful: the same knee and first
// refusal (which a 50 ms service keeps whatever the machine's speed), a
// plateau and service time within 10%.
func TestMockCheck(t *testing.T) {
	file := probeFile(t, 3, 1, 8)
	var out, errb bytes.Buffer
	code := run([]string{"mock", "--probe", "ledger=" + file, "--check"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "workers: 3, the plateau 60/s") || !strings.Contains(out.String(), "queue: 1, refusals beginning at concurrency 5") ||
		!strings.Contains(out.String(), "Every copy is faithful to its original.") {
		t.Errorf("exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
}

// What a probe cannot tell, or a file that is no probe, exits 2 saying
// what to give, and nothing is served.
func TestMockRefuses(t *testing.T) {
	noPlateau := probeFile(t, 8, 0, 3)
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte(`{"kind":"results"}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mock"}, "which dependencies? Give --probe NAME=FILE"},
		{[]string{"mock", "--probe", "ledger"}, `--probe: "ledger" is not NAME=FILE`},
		{[]string{"mock", "--probe", "ledger=" + junk}, "holds no measured step"},
		{[]string{"mock", "--probe", "ledger=" + noPlateau}, "the workers are not in the data; give --workers ledger=N"},
		{[]string{"mock", "--probe", "ledger=" + noPlateau, "--workers", "ledger=8"}, "the queue limit is not in the data; give --queue ledger=N"},
		{[]string{"mock", "--probe", "ledger=" + noPlateau, "--listen", "ledgr=127.0.0.1:0"}, `--listen ledgr: no --probe ledgr=FILE; did you mean "ledger"?`},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}
