package runner

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// A phase boundary changes the system of record's capacity within one lab
// second of its scheduled time, as its own metrics show: a poller reads
// the records station's workers from /metrics all through the runs, and
// the change from 6 to 2 and back to 6 is placed against the client's
// clock (its start, which the runner agreed with it), at the time the
// scrape that first saw it returned (an upper bound). Time scale 0.5: a
// lab second is 500 ms real, which a test binary under -race on a busy
// 2-core machine keeps to (at 0.2 its 200 ms was missed under load).
func TestPhaseBoundaryChangesCapacityOnTime(t *testing.T) {
	// Not parallel: it times changes to a lab second, and its child runs
	// would load the parallel tests (the tiny matrix's 100 ms call
	// timeouts at time scale 0.05) on a 2-core machine.
	bin := exptest.BuildLoadlab(t)
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", exptest.PhasedSpec))
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	type reading struct {
		at      time.Time
		workers int
	}
	var mu sync.Mutex
	var readings []reading
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		mock := api.Client{BaseURL: url}
		for pollCtx.Err() == nil {
			st, err := mock.Scrape(pollCtx)
			now := time.Now()
			if err == nil {
				mu.Lock()
				readings = append(readings, reading{now, st.Stations[api.Records].Workers})
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r := mustNew(t, Config{Spec: spec, Binary: bin, Target: url, MockConfig: *mockCfg}, nil)
	res, err := r.Run(ctx)
	stopPoll()
	<-polled
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteOutputs(t.TempDir(), res); err != nil {
		t.Fatalf("the results of phased runs cannot be written: %v", err)
	}
	scale := spec.TimeScale
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("run %d: %s: %s", run.Run, run.Status, run.Reason)
		}
		c := run.Client
		if len(c.Phases) < 3 || c.Phases[0].Name != "before" || c.Phases[1].Name != "drop" {
			t.Fatalf("run %d: phases %+v", run.Run, c.Phases)
		}
		// The changes as the server's metrics show them, in lab seconds
		// from the client's start.
		var changes []float64
		prev := 0
		mu.Lock()
		for _, rd := range readings {
			lab := rd.at.Sub(c.StartedAt).Seconds() / scale
			if lab < -1 || lab > 7 {
				continue
			}
			if prev != 0 && rd.workers != prev {
				changes = append(changes, lab)
			}
			prev = rd.workers
		}
		mu.Unlock()
		if len(changes) != 2 {
			t.Fatalf("run %d: the workers changed at %v lab s, want twice (at 2 and 4)", run.Run, changes)
		}
		for i, want := range []float64{2, 4} {
			if d := changes[i] - want; d < 0 || d > 1 {
				t.Errorf("run %d: change %d seen at %.3f lab s, scheduled at %v: not within one lab second", run.Run, i+1, changes[i], want)
			}
		}
		if len(run.PhaseEvents) != 2 || run.PhaseEvents[0].Action != "set" || run.PhaseEvents[0].Scheduled != 2 {
			t.Errorf("run %d: events %+v", run.Run, run.PhaseEvents)
		}
		// C4's 6 write permits meet a capacity of 4 in the drop phase only.
		t.Logf("run %d: capacity changes at %.3f and %.3f lab s; write 503s by phase: %d, %d, %d", run.Run, changes[0], changes[1],
			c.Phases[0].WriteRejections, c.Phases[1].WriteRejections, c.Phases[2].WriteRejections)
		if c.Phases[0].WriteRejections != 0 {
			t.Errorf("run %d: %d write 503s before the drop, with 6 permits against 12", run.Run, c.Phases[0].WriteRejections)
		}
		if m := run.Metrics; m["drop/accepted_per_second"] <= 0 || m["before/accepted"] <= 0 {
			t.Errorf("run %d: phase metrics %v", run.Run, m)
		}
	}
	// The next run of a steady scenario gets the configured shape back.
	live, err := (api.Client{BaseURL: url}).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if live.Stations[api.Records].Workers != 6 {
		t.Errorf("after the runs: %d workers", live.Stations[api.Records].Workers)
	}
}

const crashSpec = `name: crash
records: 100000
duration: 4s
runs: 3
time_scale: 0.2
call_timeout: 2s
permit_timeout: 10s
seed: 1
strategies: [C2]
scenarios: [crash]
cpus:
  - {name: cpus-1, cpus: 1}
phased:
  crash:
    profile: healthy
    phases:
      - {name: before, duration: 1s}
      - name: crash
        duration: 2s
        restart: {after: 500ms, signal: KILL}
      - {name: after, duration: 1s}
`

// A SIGKILL of the mock service's process mid-run, which the runner starts
// again on the same address with its store, loses no acknowledged write:
// after each run every write the client had answered 201, and every write
// of unknown outcome found stored, is in the replayed store, and nothing
// else is; the run reconciles on the store, and records keep being written
// after the restart.
func TestCrashRestartLosesNoAcknowledgedWrite(t *testing.T) {
	// Not parallel, for the same reason.
	bin := exptest.BuildLoadlab(t)
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", crashSpec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	mp, err := StartMockProcess(bin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Stop()
	if !strings.HasPrefix(mp.Dir, StoreParent()+"/") {
		t.Errorf("store in %s, not under %s", mp.Dir, StoreParent())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := mustNew(t, Config{Spec: spec, Binary: bin, Target: mp.URL, MockConfig: cfg, Restarter: mp}, nil)
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range res.Runs {
		if !run.Valid() {
			t.Fatalf("run %d: %s: %s", run.Run, run.Status, run.Reason)
		}
		c, rc := run.Client, run.Reconciliation
		if run.Restarts() != 1 || rc.Partial == "" || !strings.Contains(run.PhaseEvents[0].Note, "accepted writes replayed") {
			t.Errorf("run %d: %d restarts, reconciliation %+v", run.Run, run.Restarts(), rc)
		}
		if lost := run.Metrics["acknowledged_writes_lost"]; lost != 0 || c.WritesCreated+run.Unknown.Stored != run.Server.StoredWrites {
			t.Errorf("run %d: %d answered 201 + %d unknown found stored, store holds %d", run.Run, c.WritesCreated, run.Unknown.Stored, run.Server.StoredWrites)
		}
		var after records.PhaseResult
		for _, ph := range c.Phases {
			if ph.Name == "after" {
				after = ph
			}
		}
		if after.Accepted == 0 || c.Errors == 0 {
			t.Errorf("run %d: %d accepted after the restart, %d call errors: %+v", run.Run, after.Accepted, c.Errors, c.Phases)
		}
		t.Logf("run %d: %d created, %d unknown (%d stored), %d failed, %d errors; store %d; restart %+v", run.Run,
			c.WritesCreated, c.WriteUnknown, run.Unknown.Stored, c.Failed, c.Errors, run.Server.StoredWrites, run.PhaseEvents)
	}
}

// The runner's store goes where a slow disk sync cannot stall the writes:
// $LOADLAB_STORE_DIR, else /dev/shm when it is a tmpfs (this machine's and
// Docker's), else the temporary directory.
func TestStoreParent(t *testing.T) {
	want := os.TempDir()
	var fs syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &fs) == nil && int64(fs.Type) == tmpfsMagic {
		want = "/dev/shm"
	}
	t.Setenv(EnvStoreDir, "")
	if got := StoreParent(); got != want {
		t.Errorf("StoreParent() = %q, want %q", got, want)
	}
	dir := t.TempDir()
	t.Setenv(EnvStoreDir, dir)
	if got := StoreParent(); got != dir {
		t.Errorf("with %s=%s: %q", EnvStoreDir, dir, got)
	}
}
