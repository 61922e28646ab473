package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
)

// shop is a service of a newcomer's own with two dependencies: stock,
// 20 ms a call behind a token bucket of 100/s (burst 20) that answers 429
// with Retry-After beyond it; orders, 3 workers of 20 ms, 3 queue slots
// and 503 beyond. It counts what it refused, independently of the client.
type shop struct {
	tooMany, unavailable atomic.Int64
}

func (s *shop) handler() http.Handler {
	bucket := rate.NewLimiter(100, 20)
	workers, admitted := make(chan struct{}, 3), make(chan struct{}, 6)
	mux := http.NewServeMux()
	mux.HandleFunc("/stock/", func(w http.ResponseWriter, r *http.Request) {
		if !bucket.Allow() {
			s.tooMany.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		time.Sleep(20 * time.Millisecond)
	})
	mux.HandleFunc("/orders", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case admitted <- struct{}{}:
		default:
			s.unavailable.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		defer func() { <-admitted }()
		workers <- struct{}{}
		time.Sleep(20 * time.Millisecond)
		<-workers
		w.WriteHeader(http.StatusCreated)
	})
	return mux
}

// The newcomer's path of the README: a quick look at the mock service
// (exploratory, no calibration runs) and check of its folder; then a
// service of their own, its optional lookup and required write in a
// pipeline: probe each dependency, let advise size the strategy, run it
// with a threshold. The token bucket gets a rate (its 429s say it limits
// by rate), the workers a budget at most their workers and queue; run as
// advised, every record is accepted and the service refused nothing, by
// its own count; C2 overloads it, and the threshold says so.
func TestNewcomerPathOnAServiceOfTheirOwn(t *testing.T) {
	t.Parallel() // it checks counts and statuses, not speed
	dir := t.TempDir()
	spec, hyp := lockedTinyExperiment(t, dir, 4) // locked at 4 runs, run with 3
	look := filepath.Join(dir, "look")
	if code, _, stderr := loadlabChild(t, "experiment", "--file", spec, "--hypotheses", hyp, "--runs", "3", "--records", "10",
		"--calibration-runs", "0", "--out", look); !ranToTheEnd(code, stderr) {
		t.Fatalf("the quick look: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := loadlabChild(t, "check", look); code != 0 {
		t.Fatalf("check of the quick look: exit %d: %s%s", code, stdout, stderr)
	}
	var s shop
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	pipe := filepath.Join(dir, "shop.yaml")
	writeFile(t, pipe, fmt.Sprintf(`name: shop
dependencies:
  - name: stock
    base_url: %[1]s
    method: GET
    path: /stock/{{.ID}}
  - name: orders
    base_url: %[1]s
    method: POST
    path: /orders
    body: '{"id":{{json .ID}}}'
steps:
  - dependency: stock
  - dependency: orders
    required: true
`, srv.URL))
	probe := func(name string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args = append([]string{"probe", "--json"}, args...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("probe %s: exit %d: %s", name, code, errb.String())
		}
		f := filepath.Join(dir, name+".json")
		writeFile(t, f, out.String())
		return f
	}
	// Steps of 1 s for the bucket: a rate is read from them (below).
	stock := probe("stock", "--step", "1s", "--warm-up", "500ms", "--target", srv.URL+"/stock/1", "--concurrency", "1,2,4,8")
	orders := probe("orders", "--step", "400ms", "--warm-up", "200ms", "--target", srv.URL+"/orders", "--method", "POST", "--body", `{"id":"p"}`, "--concurrency", "1-10")
	file := filepath.Join(dir, "advised.yaml")
	var out, errb bytes.Buffer
	if code := run([]string{"advise", "--pipeline", pipe, "--probe", "stock=" + stock, "--probe", "orders=" + orders, "--out", file}, &out, &errb); code != 0 {
		t.Fatalf("advise: exit %d: %s", code, errb.String())
	}
	advised := out.String()
	p, err := pipeline.Load(pipe)
	if err != nil {
		t.Fatal(err)
	}
	st, err := strategy.LoadFile(file, p)
	if err != nil {
		t.Fatal(err)
	}
	// The rate is the bucket's 100/s as the probe's 1 s windows read it:
	// more by up to its burst of 20 where a stall of the probe's client in
	// a warm-up let the bucket fill, less one call per window. At up to
	// 120/s, 100 records take 0.83 s or more, in which the bucket lets
	// through its burst and 83: no 429.
	if r := st.RateFor("stock"); !(r > 0 && r <= 120) || st.RateFor("orders") != 0 || st.PermitsFor("orders") < 1 || st.PermitsFor("orders") > 6 {
		t.Fatalf("advised stock ≤ %g calls/s, orders ≤ %g calls/s and %d permits; want a rate of at most 100/s (+ 2.5) for stock only, "+
			"and at most orders' 3 workers + 3 queue slots:\n%s", r, st.RateFor("orders"), st.PermitsFor("orders"), advised)
	}
	if !strings.Contains(advised, "Rate: stock at most ") || !strings.Contains(advised, "Run it: loadlab run --pipeline "+pipe+" --strategy-file "+file+" --call-timeout ") {
		t.Errorf("advise does not say the rate or how to run it:\n%s", advised)
	}
	s.tooMany.Store(0)
	s.unavailable.Store(0)
	out.Reset()
	errb.Reset()
	code := run([]string{"run", "--pipeline", pipe, "--strategy-file", file, "--records", "100", "--threshold", "rejected<1%"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "Accepted 100 of 100 records (100%: 100 complete, 0 incomplete)") ||
		!strings.Contains(out.String(), "threshold rejected<1%: measured 0% (0 of 200), held") || strings.Contains(out.String(), "OVERLOAD") {
		t.Fatalf("run as advised: exit %d:\n%s%s", code, out.String(), errb.String())
	}
	if n, m := s.tooMany.Load(), s.unavailable.Load(); n != 0 || m != 0 {
		t.Errorf("run as advised: the service refused %d calls with 429 and %d with 503:\n%s", n, m, out.String())
	}
	// The command advise printed runs as printed: its flags and file are
	// good (exit 2 is bad input). Its timeouts are the probe's slowest
	// successes, which a stall of this machine beside the test can pass:
	// a call timeout then ends a record incomplete or unknown (exit 1),
	// never unaccounted.
	runIt := advised[strings.Index(advised, "Run it: loadlab ")+len("Run it: loadlab "):]
	runIt = strings.TrimSpace(runIt[:strings.Index(runIt, "\n")])
	out.Reset()
	errb.Reset()
	code = run(append(strings.Fields(runIt), "--records", "50"), &out, &errb)
	if (code != 0 && code != 1) || !strings.Contains(out.String(), "Records 50: complete ") {
		t.Errorf("advise's command %q: exit %d:\n%s%s", runIt, code, out.String(), errb.String())
	}
	// 32 records in flight and no budget: refused, said, and breached.
	out.Reset()
	errb.Reset()
	code = run([]string{"run", "--pipeline", pipe, "--strategy", "C2", "--records", "200", "--threshold", "rejected<1%"}, &out, &errb)
	if refused := s.tooMany.Load() + s.unavailable.Load(); code != 99 || refused == 0 || !strings.Contains(out.String(), "OVERLOAD: ") ||
		!strings.Contains(errb.String(), "run: 1 of 1 thresholds breached: rejected<1%: measured ") {
		t.Errorf("C2: exit %d, the service refused %d:\n%s%s", code, refused, out.String(), errb.String())
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
