package mockcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// probeFile is the JSON of a probe, on a fake clock, of a service written
// here: workers serving 50 ms each, slots waiting, 503 beyond; concurrency
// 1 to max, short steps.
func probeFile(t *testing.T, dir string, workers, slots, max int) string {
	t.Helper()
	url, dial := mocktest.Serve(t, testkit.Station(workers, slots, 50*time.Millisecond, http.StatusServiceUnavailable, ""))
	cfg := probe.Default()
	cfg.Target, cfg.Dial, cfg.Method, cfg.MaxConcurrency = url+"/ledger", dial, http.MethodPost, max
	cfg.Step, cfg.WarmUp = 600*time.Millisecond, 150*time.Millisecond
	r, err := probe.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --check probes each copy as its original was and finds a faithful one
// faithful, saying where each figure came from; a copy given one worker
// more differs, exit 1, and the table says where.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		o := options{probes: cli.Strings{M: map[string]string{"ledger": probeFile(t, dir, 3, 1, 8)}}}
		copies, cfg, err := o.fit()
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Join(copies[0].Said, "\n")
		if !strings.Contains(said, "workers: 3, the plateau 60/s") || !strings.Contains(said, "queue: 1, refusals beginning at concurrency 5") {
			t.Errorf("said:\n%s", said)
		}
		for _, extra := range []int{0, 1} {
			cfg.Copies[0].Station.Workers = copies[0].Workers + extra
			mc := mocktest.StartCopies(t, mocktest.CopiesOptions{Config: cfg, InMemory: true})
			var out bytes.Buffer
			err := o.checkAll(copies, mc.URLs, mc.Dial, &out)
			var ee *cli.ExitError
			switch {
			case extra == 0 && (err != nil || !strings.Contains(out.String(), "Every copy is faithful to its original.")):
				t.Errorf("faithful copy: %v\n%s", err, out.String())
			case extra == 1 && (!errors.As(err, &ee) || ee.Code != cli.ExitFailed || !strings.Contains(out.String(), "DIFFERS")):
				t.Errorf("a copy with a worker more: %v\n%s", err, out.String())
			}
			mc.Stop()
		}
	})
}

// What a probe cannot tell, or a file that is no probe, is refused (exit
// 2) saying what to give, before anything is served.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	var noPlateau string
	synctest.Test(t, func(t *testing.T) { noPlateau = probeFile(t, dir, 8, 0, 3) })
	junk := filepath.Join(dir, "junk.json")
	os.WriteFile(junk, []byte(`{"kind":"results"}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "which dependencies? Give --probe NAME=FILE"},
		{[]string{"--probe", "ledger"}, `--probe: "ledger" is not NAME=FILE`},
		{[]string{"--probe", "ledger=" + junk}, "holds no measured step"},
		{[]string{"--probe", "ledger=" + noPlateau}, "the workers are not in the data; give --workers ledger=N"},
		{[]string{"--probe", "ledger=" + noPlateau, "--workers", "ledger=8"}, "the queue limit is not in the data; give --queue ledger=N"},
		{[]string{"--probe", "ledger=" + noPlateau, "--listen", "ledgr=127.0.0.1:0"}, `--listen ledgr: no --probe ledgr=FILE; did you mean "ledger"?`},
	} {
		err := Main(c.args, &bytes.Buffer{})
		var ee *cli.ExitError
		if !errors.As(err, &ee) || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want exit 2 and %q", c.args, err, c.want)
		}
	}
}
