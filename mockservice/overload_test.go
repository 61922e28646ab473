package mockservice_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// overloadFigures is what one overload run measured.
type overloadFigures struct {
	elapsed          time.Duration // from the first send to the last answer
	sending          time.Duration // while the clients were sending
	window           time.Duration // from the first arrival to the last, by the server's log
	mid              time.Duration // the middle eight tenths of the window
	startedMid       int           // services started in mid
	created, refused int           // 201s, 503s
	other            map[int]int   // any other status, by code
	errors           int           // transport errors
	capacity         float64       // writes per second the system of record can serve
	allBusy          time.Duration // of mid, while every worker was busy
	expected         float64       // services it can start in mid
	least            float64       // services it starts while all were busy
	tolerance        float64
	settle           time.Duration // until goroutines and fds were back at their baseline
	goroutines, fds  [2]int        // baseline, and after settling
}

// overload runs clients concurrent clients, each posting writes of fresh ids
// for duration, together offering multiple × the capacity of the system of
// record (0: each client back to back) under slow-write at the given time
// scale. It returns what happened, client side and server side (from the
// service's counters and its request log), and how long goroutines and open
// file descriptors took to come back to their baseline once the clients had
// closed their connections (at most settleLimit).
func overload(t *testing.T, clients int, duration time.Duration, scale, multiple float64, settleLimit time.Duration) overloadFigures {
	t.Helper()
	cfg := config.Default()
	cfg.Profile = config.ProfileSlowWrite
	cfg.TimeScale = scale
	cfg.RequestLogCap = 1 << 21 // every request, to know when the load arrived
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	write := time.Duration(float64(cfg.Profiles[cfg.Profile].Records.Value) * scale)

	capacity := float64(cfg.Records.Workers) / write.Seconds() // writes per second
	// Each client sends on its own schedule, one request every pause, so
	// that together they offer multiple × capacity (0: back to back).
	var pause time.Duration
	if multiple > 0 {
		pause = time.Duration(float64(clients) / (multiple * capacity) * float64(time.Second))
	}

	var f overloadFigures
	f.goroutines[0], f.fds[0] = baseline(t, m.URL)
	transport := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	var created, refused, failed atomic.Int64
	var mu sync.Mutex
	f.other = map[int]int{}
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(duration)
	for c := range clients {
		wg.Go(func() {
			next := start.Add(time.Duration(c) * pause / time.Duration(clients))
			for i := 0; next.Before(stop) && time.Now().Before(stop); i++ {
				time.Sleep(time.Until(next))
				next = next.Add(pause)
				id := fmt.Sprintf("o%d-%d", c, i)
				req, _ := http.NewRequest(http.MethodPost, m.URL+api.PathRecords, strings.NewReader(writeBody(id)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(api.HeaderRequestID, id)
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusCreated:
					created.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
				default:
					mu.Lock()
					f.other[resp.StatusCode]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	f.elapsed, f.sending = time.Since(start), duration
	f.created, f.refused, f.errors = int(created.Load()), int(refused.Load()), int(failed.Load())
	// The load lasted, at the server, from the first arrival to the last.
	// In the middle eight tenths of that time the station was saturated,
	// whatever the ramp at the start and stragglers at the end (on a busy
	// machine a request sent before the stop can arrive well after it).
	snap, err := api.Client{BaseURL: m.URL, HTTP: client}.RequestLog(context.Background()) // on the clients' connections, closed below
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Entries) == 0 || snap.Dropped > 0 {
		t.Fatalf("request log: %d entries, %d dropped", len(snap.Entries), snap.Dropped)
	}
	first, last := snap.Entries[0].Arrived, snap.Entries[0].Arrived
	for _, e := range snap.Entries {
		first, last = minTime(first, e.Arrived), maxTime(last, e.Arrived)
	}
	f.window = last.Sub(first)
	from, to := first.Add(f.window/10), last.Add(-f.window/10)
	for _, e := range snap.Entries {
		if e.Started != nil && !e.Started.Before(from) && e.Started.Before(to) {
			f.startedMid++
		}
	}
	f.mid = to.Sub(from)
	// While every worker is busy, each serves back to back: workers /
	// write time services start per second, and never more. How long every
	// worker was busy is read from the log: on a host that starves the
	// clients, the queue can run dry and a worker wait for a request (an
	// idle host keeps all six busy through the middle of the load). So the
	// services started in the middle are at most its length times the
	// capacity, and at least the time all were busy times it. Tolerance:
	// one service per worker (where in its service each worker was at
	// either end), and 2% for the scheduler.
	f.capacity = capacity
	f.allBusy = allBusy(snap.Entries, cfg.Records.Workers, write, from, to)
	f.expected = capacity * f.mid.Seconds()
	f.least = capacity * f.allBusy.Seconds()
	f.tolerance = float64(cfg.Records.Workers) + 0.02*f.expected

	st := m.Service.Stats()
	rs := st.Stations[api.Records]
	if rs.Requests[api.OutcomeServed] != float64(f.created) || rs.Requests[api.OutcomeRejected] != float64(f.refused) || st.StoredWrites != f.created {
		t.Errorf("server counted %v served, %v rejected, %d stored; clients %d created, %d refused",
			rs.Requests[api.OutcomeServed], rs.Requests[api.OutcomeRejected], st.StoredWrites, f.created, f.refused)
	}
	if rs.HighWater.Busy != cfg.Records.Workers || rs.HighWater.Queue != cfg.Records.Queue || rs.Busy != 0 || rs.QueueLength != 0 || rs.Offered != 0 {
		t.Errorf("station %+v; want every worker and queue slot used, and nothing left", rs)
	}

	// The clients leave: back to the baseline.
	transport.CloseIdleConnections()
	settled := time.Now()
	for {
		f.goroutines[1], f.fds[1] = runtime.NumGoroutine(), openFDs(t)
		if f.goroutines[1] <= f.goroutines[0] && f.fds[1] <= f.fds[0] {
			f.settle = time.Since(settled)
			break
		}
		if time.Since(settled) > settleLimit {
			f.settle = -1
			break
		}
		time.Sleep(time.Millisecond) // fine enough to time the return
	}
	return f
}

// check reports every way f falls short of what the service promises.
func (f overloadFigures) check(t *testing.T, settleLimit time.Duration) {
	t.Helper()
	if f.errors != 0 || len(f.other) != 0 {
		t.Errorf("%d transport errors, other statuses %v; want none", f.errors, f.other)
	}
	if n := float64(f.startedMid); n > f.expected+f.tolerance || n < f.least-f.tolerance {
		t.Errorf("%d writes started in the middle %v of the load (every worker busy for %v of it), want %.0f to %.0f ± %.0f "+
			"(workers / write time × the time all were busy, and × the duration)",
			f.startedMid, f.mid.Round(time.Millisecond), f.allBusy.Round(time.Millisecond), f.least, f.expected, f.tolerance)
	}
	// Overloaded: writes were refused, beside every worker and queue slot
	// used (checked with the server's counts). How many times over the
	// capacity 300 clients offer is this machine's speed (about 5 idle,
	// under 2 beside make test's other packages): logged, not held.
	offered := float64(f.created+f.refused) / f.window.Seconds()
	if f.refused == 0 {
		t.Errorf("%.0f writes/s offered against a capacity of %.0f/s and none refused: not overloaded", offered, f.capacity)
	}
	t.Logf("%.0f writes/s offered against a capacity of %.0f/s (%.1f times)", offered, f.capacity, offered/f.capacity)
	if f.settle < 0 {
		t.Errorf("goroutines %d → %d, open fds %d → %d after %v; want back at the baseline", f.goroutines[0], f.goroutines[1], f.fds[0], f.fds[1], settleLimit)
	}
	back := "not back at the baseline"
	if f.settle >= 0 {
		back = fmt.Sprintf("back at the baseline %v after the clients closed", f.settle.Round(time.Millisecond))
	}
	t.Logf("%v of sending (%v in all; load at the server for %v): %d writes served (%d started in the middle %v, every worker busy for %v of it; expected %.0f to %.0f ± %.0f), "+
		"%d refused with 503, %d transport errors, other %v; goroutines %d → %d, fds %d → %d, %s",
		f.sending, f.elapsed.Round(time.Millisecond), f.window.Round(time.Millisecond), f.created, f.startedMid, f.mid.Round(time.Millisecond),
		f.allBusy.Round(time.Millisecond), f.least, f.expected, f.tolerance, f.refused, f.errors, f.other,
		f.goroutines[0], f.goroutines[1], f.fds[0], f.fds[1], back)
}

// allBusy is how long, within [from, to), at least workers of the log's
// served requests were in their planned service: from their start for
// the write time (a late timer's real finish overlaps the next service,
// which starts at the planned end, and would count a worker twice).
func allBusy(entries []api.RequestEntry, workers int, write time.Duration, from, to time.Time) time.Duration {
	type event struct {
		at    time.Time
		delta int
	}
	var ev []event
	for _, e := range entries {
		if e.Started != nil && e.Finished != nil {
			ev = append(ev, event{*e.Started, 1}, event{e.Started.Add(write), -1})
		}
	}
	slices.SortStableFunc(ev, func(a, b event) int { return a.at.Compare(b.at) })
	var busy int
	var total time.Duration
	for i, e := range ev {
		busy += e.delta
		if busy < workers || i+1 == len(ev) {
			continue
		}
		if a, b := maxTime(e.at, from), minTime(ev[i+1].at, to); b.After(a) {
			total += b.Sub(a)
		}
	}
	return total
}

// baseline waits until the service at url answers and this process's
// goroutine and open-descriptor counts are steady, and returns them.
func baseline(t *testing.T, url string) (goroutines, fds int) {
	t.Helper()
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := once.Get(url + api.PathHealthz)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	goroutines, fds = runtime.NumGoroutine(), openFDs(t)
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		g, n := runtime.NumGoroutine(), openFDs(t)
		if g == goroutines && n == fds {
			break
		}
		goroutines, fds = g, n
	}
	return goroutines, fds
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open file descriptors: %v", err)
	}
	return len(fds)
}

// Real network, since overload is the subject: 300 clients together offer
// 10 × the system of record's capacity for 2.5 s, under slow-write at time
// scale 0.5 (6 workers, 75 ms a write: 80 writes/s, 800/s offered). It
// serves exactly its capacity (by its own request log, 80 services start
// per second in the middle of the load while every worker is busy, and
// never more), refuses the rest fast with 503,
// drops no connection, and leaves no goroutine or file descriptor behind.
//
// The offered rate is bounded so that the race detector's overhead does not
// saturate a 2-CPU machine: once goroutines wait longer to run than a
// queued write waits for its worker (one write time), the workers fall
// idle between services and the capacity is not reached (at time scale 0.1
// and 4,000 writes/s offered under -race, such a machine serves about 633
// of 800).
func TestOverload(t *testing.T) {
	const settle = 2 * time.Second
	overload(t, 300, 2500*time.Millisecond, 0.5, 10, settle).check(t, settle)
}

// The long overload run the README quotes: 500 clients posting back to back
// for 30 s at time scale 1. Not part of make test; run by hand with
//
//	LOADLAB_LONG=1 go test -run TestOverloadLong -v ./mockservice
func TestOverloadLong(t *testing.T) {
	if os.Getenv("LOADLAB_LONG") == "" {
		t.Skip("set LOADLAB_LONG=1 to run (30 s)")
	}
	const settle = 10 * time.Second
	overload(t, 500, 30*time.Second, 1, 0, settle).check(t, settle)
}
