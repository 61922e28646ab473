package records_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// When LOADLAB_C1_TARGET is set the test binary runs one C1 run against it
// and prints the result: the GOMAXPROCS test starts it with GOMAXPROCS=1
// and =2.
func TestMain(m *testing.M) {
	if target := os.Getenv("LOADLAB_C1_TARGET"); target != "" {
		cfg := records.DefaultConfig()
		cfg.Target, cfg.Records, cfg.TimeScale = target, 20, 0.1
		cfg.Strategy, _ = strategy.Parse("C1")
		res, err := records.Run(context.Background(), cfg)
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode(res)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type mock struct {
	url   string
	stop  func() error
	admin api.Client
	http  *http.Client
	dial  transport.Dialer
	scale float64 // the service's time scale: the client's too
}

// stats reads the mock service's own figures, as any client would: from
// GET /admin/stats.
func (m *mock) stats(t testing.TB) api.Stats {
	t.Helper()
	st, err := m.admin.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// startMock runs the real mock service until the test ends, on an
// in-memory network: call it inside a synctest bubble, whose fake clock
// the service's timers and the client's then share. Real time and a real
// network are for the few tests whose subject they are (startLoopback).
func startMock(t testing.TB, cfg config.Config) *mock {
	t.Helper()
	return wrap(mocktest.Start(t, mocktest.Options{Config: cfg, InMemory: true}))
}

// startLoopback runs the real mock service on a loopback port.
func startLoopback(t testing.TB, cfg config.Config) *mock {
	t.Helper()
	return wrap(mocktest.Start(t, mocktest.Options{Config: cfg}))
}

func wrap(m *mocktest.Mock) *mock {
	return &mock{url: m.URL, stop: m.Stop, admin: m.Client, http: m.HTTP, dial: m.Dial, scale: m.TimeScale}
}

// run resets m and runs n records of the strategy named against it, at its time
// scale, changed by change.
func run(t *testing.T, m *mock, name string, n int, change func(*records.Config)) records.Result {
	t.Helper()
	if err := m.admin.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := records.DefaultConfig()
	cfg.Target, cfg.Records, cfg.TimeScale, cfg.RunID, cfg.Dial = m.url, n, m.scale, name+"-", m.dial
	var err error
	if cfg.Strategy, err = strategy.Parse(name); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&cfg)
	}
	res, err := records.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkAddsUp(t, res)
	return res
}

// config returns records.DefaultConfig aimed at m (its URL, time scale and
// network).
func (m *mock) config() records.Config {
	cfg := records.DefaultConfig()
	cfg.Target, cfg.TimeScale, cfg.Dial = m.url, m.scale, m.dial
	return cfg
}

func checkAddsUp(t *testing.T, r records.Result) {
	t.Helper()
	if sum := r.Complete + r.Incomplete + r.WriteRejected + r.StepRejected + r.Failed + r.WriteUnknown + r.Interrupted + r.NotStarted; sum != r.Records {
		t.Errorf("%s: states add up to %d, not %d: %+v", r.Strategy, sum, r.Records, r)
	}
}

// Under slow writes, per-dependency budgets keep the system of record at
// six writes and free of 503s; C2 offers more than its 6 workers + 6 queue
// slots and is refused. In lab time on a fake clock (as every test here
// with startMock): the figures are the strategies', not the machine's.
func TestSlowWriteC4ProtectsTheSystemOfRecord(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testSlowWriteC4)
}

func testSlowWriteC4(t *testing.T) {
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowWrite
	m := startMock(t, cfg)

	c4 := run(t, m, "C4", 200, nil)
	if c4.WriteRejections != 0 || c4.WriteRejected != 0 {
		t.Errorf("C4: %d write rejections, %d records write_rejected; want none", c4.WriteRejections, c4.WriteRejected)
	}
	if c4.PeakConcurrentWrite == nil || *c4.PeakConcurrentWrite > 6 || c4.PeakInFlight[records.Records] > 6 {
		t.Errorf("C4: server saw %v concurrent writes, client %d; want ≤ 6", testkit.Value(c4.PeakConcurrentWrite), c4.PeakInFlight[records.Records])
	}
	if c4.Complete != 200 {
		t.Errorf("C4: %d complete, want 200", c4.Complete)
	}

	c2 := run(t, m, "C2", 200, nil)
	if c2.WriteRejections == 0 || c2.WriteRejected != c2.WriteRejections {
		t.Errorf("C2: %d write rejections, %d records write_rejected; want some, equal", c2.WriteRejections, c2.WriteRejected)
	}
	if c2.PeakConcurrentWrite == nil || *c2.PeakConcurrentWrite <= 12 {
		t.Errorf("C2: server saw %v concurrent writes, want > 12", testkit.Value(c2.PeakConcurrentWrite))
	}
	// What the client saw reconciles with what the server counted: 201s
	// with new stored writes, writes sent with the writes the station saw.
	st := c2.Server
	var writesSeen float64
	for _, v := range st.Stations[api.Records].Requests {
		writesSeen += v
	}
	if c2.WritesCreated != st.StoredWrites || c2.WritesDuplicate != st.DuplicateWrites || c2.WritesCreated != c2.Complete+c2.Incomplete {
		t.Errorf("C2: client saw %d × 201 and %d × 200, server stored %d with %d duplicates; %d records accepted",
			c2.WritesCreated, c2.WritesDuplicate, st.StoredWrites, st.DuplicateWrites, c2.Complete+c2.Incomplete)
	}
	if float64(c2.CallsSent[records.Records]) != writesSeen || c2.CallsSent[records.Records] != 200 {
		t.Errorf("C2: client sent %d writes, server saw %v; want 200", c2.CallsSent[records.Records], writesSeen)
	}
	t.Logf("C4 %.1f accepted/s, C2 %.1f accepted/s (%d rejections, peak %d writes)",
		c4.AcceptedPerLabSecond, c2.AcceptedPerLabSecond, c2.WriteRejections, *c2.PeakConcurrentWrite)
}

// Under slow enrichment with hangs: calls that hang past the call timeout
// and callers who wait past the permit timeout are counted apart, and the
// server saw exactly the calls the client made.
func TestPermitAndCallTimeoutsAreToldApart(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testTimeoutsToldApart)
}

func testTimeoutsToldApart(t *testing.T) {
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowEnrichment
	// Every fourth call hangs, so a 60-record run surely sees some.
	p := cfg.Profiles[config.ProfileSlowEnrichment]
	p.Enrichment.HangProbability = 0.25
	cfg.Profiles[config.ProfileSlowEnrichment] = p
	m := startMock(t, cfg)

	res := run(t, m, "C4", 60, func(c *records.Config) {
		c.Strategy.Permits[records.Enrichment] = 2
		c.PermitTimeout = 500 * time.Millisecond
	})
	enrich := res.Calls[records.Enrichment]
	if enrich[budgets.CallTimeout] == 0 || enrich[budgets.PermitTimeout] == 0 {
		t.Fatalf("enrichment calls %v: want both call and permit timeouts", enrich)
	}
	if res.Incomplete == 0 || res.Complete+res.Incomplete != 60 {
		t.Errorf("complete %d, incomplete %d: records with failed enrichment are still written", res.Complete, res.Incomplete)
	}
	// Calls that got a permit reached the server; permit timeouts did not.
	made := enrich[budgets.OK] + enrich[budgets.Rejected] + enrich[budgets.CallTimeout] + enrich[budgets.Error]
	// The hangs the client left go on being served: wait them out (a
	// minute is longer than any hang of the profile).
	time.Sleep(time.Minute)
	synctest.Wait()
	st := m.stats(t).Stations[api.Enrichment]
	var served float64
	for _, v := range st.Requests {
		served += v
	}
	if st.Busy != 0 {
		t.Errorf("enrichment still busy a minute after the run: %+v", st)
	}
	if served != float64(made) || res.CallsSent[records.Enrichment] != made {
		t.Errorf("server counted %v enrichment requests, client made %d and counts %d sent", served, made, res.CallsSent[records.Enrichment])
	}
	if after := m.stats(t).Stations[api.Enrichment].Requests[api.OutcomeServedAfterClientLeft]; after != float64(enrich[budgets.CallTimeout]) {
		t.Errorf("server served %v after the client left, client timed out %d", after, enrich[budgets.CallTimeout])
	}
}

// 32 concurrent calls reach the server as 32: the transport does not bound
// concurrency behind the strategy's back.
func TestThirtyTwoCallsReachTheServer(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testThirtyTwoCalls)
}

func testThirtyTwoCalls(t *testing.T) {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Enrichment = latency.Spec{Kind: "fixed", Value: 300 * time.Millisecond}
	cfg.Profiles[config.ProfileHealthy] = p
	m := startMock(t, cfg)
	res := run(t, m, "C2", 32, nil)
	got := res.Server.Stations[api.Enrichment].HighWater.Offered
	if got != 32 || res.PeakInFlight[records.Enrichment] != 32 {
		t.Errorf("server saw %d concurrent enrichment calls, client %d; want 32", got, res.PeakInFlight[records.Enrichment])
	}
}

// C1's records in flight follow GOMAXPROCS, checked in child processes
// (over loopback: the child is another process).
func TestC1FollowsGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; make test runs it")
	}
	cfg := config.Default()
	cfg.TimeScale = 0.1
	m := startLoopback(t, cfg)
	for _, procs := range []int{1, 2} {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "LOADLAB_C1_TARGET="+m.url, "GOMAXPROCS="+strconv.Itoa(procs))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%d: %v", procs, err)
		}
		var res records.Result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("GOMAXPROCS=%d: %v: %s", procs, err, out)
		}
		checkAddsUp(t, res)
		if res.GOMAXPROCS != procs || res.RecordsInFlight != procs || res.PeakRecordsInFlight != procs {
			t.Errorf("GOMAXPROCS=%d: runtime %d, records in flight %d, peak %d", procs, res.GOMAXPROCS, res.RecordsInFlight, res.PeakRecordsInFlight)
		}
		if res.PeakInFlight[records.Enrichment] > procs {
			t.Errorf("GOMAXPROCS=%d: %d enrichment calls in flight", procs, res.PeakInFlight[records.Enrichment])
		}
	}
}

// A target that dies mid-run: the run ends, every record has a state, and
// the failures are counted as errors.
func TestTargetDyingMidRun(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testTargetDying)
}

func testTargetDying(t *testing.T) {
	cfg := config.Default()
	cfg.ShutdownTimeout = time.Millisecond // close connections at once
	m := startMock(t, cfg)
	go func() {
		time.Sleep(400 * time.Millisecond)
		_ = m.stop()
	}()
	ccfg := m.config()
	ccfg.Records = 200
	ccfg.Strategy, _ = strategy.Parse("C2")
	res, err := records.Run(context.Background(), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	checkAddsUp(t, res)
	if res.Errors == 0 || res.Failed == 0 {
		t.Errorf("errors %d, failed %d; want the dead target's failures counted", res.Errors, res.Failed)
	}
}

func TestUnreachableTargetSendsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	cfg := records.DefaultConfig()
	cfg.Target = url
	if _, err := records.Run(context.Background(), cfg); !errors.Is(err, records.ErrUnreachable) {
		t.Errorf("got %v, want ErrUnreachable", err)
	}
}
