package runner

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/mockproc"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// A phase boundary changes the system of record's capacity never before
// its scheduled time and as soon as the change is acknowledged, as the
// service's own metrics show: a poller reads the records station's
// workers from /metrics all through the runs, and every scrape that
// returned before the runner sent a change shows the capacity before it,
// every scrape begun after the change was acknowledged the capacity after
// it. How late a change is, is this machine's speed: logged, not judged.
func TestPhaseBoundaryChangesCapacityInOrder(t *testing.T) {
	// Not parallel: its child runs would load the parallel tests (the tiny
	// matrix's 100 ms call timeouts at time scale 0.05) on a 2-core machine.
	bin := exptest.BuildLoadlab(t)
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", exptest.PhasedSpec))
	if err != nil {
		t.Fatal(err)
	}
	url, mockCfg := exptest.StartMock(t, spec.Seed, spec.TimeScale)
	type reading struct {
		start, at time.Time // the scrape was sent, and returned
		workers   int
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
			start := time.Now()
			st, err := mock.Scrape(pollCtx)
			now := time.Now()
			if err == nil {
				mu.Lock()
				readings = append(readings, reading{start, now, st.Stations[api.Records].Workers})
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
		// from the agreed start (the client's, less how late it began).
		agreed := c.StartedAt.Add(-time.Duration(c.StartLateSeconds * float64(time.Second)))
		lab := func(t time.Time) float64 { return t.Sub(agreed).Seconds() / scale }
		var changes []float64
		var mine []reading
		prev := 0
		mu.Lock()
		for _, rd := range readings {
			if l := lab(rd.at); l < -1 || l > 7 {
				continue
			}
			mine = append(mine, rd)
			if prev != 0 && rd.workers != prev {
				changes = append(changes, lab(rd.at))
			}
			prev = rd.workers
		}
		mu.Unlock()
		if len(changes) != 2 || len(run.PhaseEvents) != 2 {
			t.Fatalf("run %d: the workers changed at %v lab s, want twice (at 2 and 4); events %+v", run.Run, changes, run.PhaseEvents)
		}
		// Before the first change 6 workers, between the two 2, after 6.
		for i, ev := range run.PhaseEvents {
			end := spec.Duration.Seconds() // the phase it begins ends at the next change, or with the run
			if i+1 < len(run.PhaseEvents) {
				end = run.PhaseEvents[i+1].Scheduled
			}
			if ev.At < ev.Scheduled || ev.Done > end {
				t.Errorf("run %d: change %d sent at %.3f lab s and acknowledged at %.3f, not within its phase [%v, %v]", run.Run, i+1, ev.At, ev.Done, ev.Scheduled, end)
			}
			before, after := []int{6, 2}[i], []int{2, 6}[i]
			next := math.Inf(1)
			if i+1 < len(run.PhaseEvents) {
				next = run.PhaseEvents[i+1].At
			}
			for _, rd := range mine {
				switch {
				case lab(rd.at) < ev.At && (i == 0 || lab(rd.start) > run.PhaseEvents[i-1].Done) && rd.workers != before:
					t.Errorf("run %d: a scrape returned at %.3f lab s, before change %d was sent (%.3f), saw %d workers, want %d",
						run.Run, lab(rd.at), i+1, ev.At, rd.workers, before)
				case lab(rd.start) > ev.Done && lab(rd.at) < next && rd.workers != after:
					t.Errorf("run %d: a scrape begun at %.3f lab s, after change %d was acknowledged (%.3f), saw %d workers, want %d",
						run.Run, lab(rd.start), i+1, ev.Done, rd.workers, after)
				}
			}
			t.Logf("run %d: change %d scheduled at %v lab s, sent at %.3f, acknowledged at %.3f, first seen at %.3f",
				run.Run, i+1, ev.Scheduled, ev.At, ev.Done, changes[i])
		}
		if run.PhaseEvents[0].Action != "set" || run.PhaseEvents[0].Scheduled != 2 {
			t.Errorf("run %d: events %+v", run.Run, run.PhaseEvents)
		}
		// C4's 6 write permits meet a capacity of 4 in the drop phase only.
		t.Logf("run %d: write 503s by phase: %d, %d, %d", run.Run,
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
duration: 5s
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
      - {name: after, duration: 2s}
`

// A SIGKILL of the mock service's process mid-run, which the runner starts
// again on the same address with its store, loses no acknowledged write:
// after each run every write the client had answered 201, and every write
// of unknown outcome found stored, is in the replayed store, and nothing
// else is; the run reconciles on the store, and records keep being written
// after the restart: the store holds more writes than it replayed (how
// many of them land in the after phase is how long this machine took to
// start the process again: a restart under load ended 0.1 lab s before
// the run did).
func TestCrashRestartLosesNoAcknowledgedWrite(t *testing.T) {
	// Not parallel, for the same reason.
	bin := exptest.BuildLoadlab(t)
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", crashSpec))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	mp, err := mockproc.StartMockProcess(bin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Stop()
	if !strings.HasPrefix(mp.Dir, mockproc.StoreParent()+"/") {
		t.Errorf("store in %s, not under %s", mp.Dir, mockproc.StoreParent())
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
		note := run.PhaseEvents[0].Note
		var replayed int
		if i := strings.LastIndex(note, ": "); i < 0 {
			t.Errorf("run %d: the restart's note %q names no replay", run.Run, note)
		} else if _, err := fmt.Sscanf(note[i+2:], "%d accepted writes replayed", &replayed); err != nil {
			t.Errorf("run %d: the restart's note %q: %v", run.Run, note, err)
		}
		if run.Server.StoredWrites <= replayed || c.Errors == 0 {
			t.Errorf("run %d: the store holds %d writes, %d of them replayed at the restart; %d call errors: %+v", run.Run, run.Server.StoredWrites, replayed, c.Errors, c.Phases)
		}
		t.Logf("run %d: %d created, %d unknown (%d stored), %d failed, %d errors; store %d; restart %+v", run.Run,
			c.WritesCreated, c.WriteUnknown, run.Unknown.Stored, c.Failed, c.Errors, run.Server.StoredWrites, run.PhaseEvents)
	}
}
