package virtualcopy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/virtualcopy"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// station is a service written here, not the mock service.
var station = testkit.Station

// limited is a service written here limited by a token bucket: perSecond
// calls a second, each served for service, 429 with Retry-After beyond.
func limited(perSecond float64, service time.Duration) http.Handler {
	lim := rate.NewLimiter(rate.Limit(perSecond), 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !lim.Allow() {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		time.Sleep(service)
		w.WriteHeader(http.StatusOK)
	})
}

// probed is a probe of h at concurrency 1 to max on the fake clock.
func probed(t *testing.T, h http.Handler, max int) probe.Result {
	t.Helper()
	url, dial := mocktest.Serve(t, h)
	cfg := probe.Default()
	cfg.Target, cfg.Dial, cfg.Method = url+"/orders", dial, http.MethodPost
	cfg.Concurrency = nil
	cfg.MaxConcurrency, cfg.Step, cfg.WarmUp = max, 2*time.Second, 500*time.Millisecond
	r, err := probe.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A station's copy takes its workers from the plateau at the knee, its
// queue from where refusals began, its refusal status and Retry-After;
// a token bucket's copy its rate; each says where each figure came from.
func TestFitFromAProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := probed(t, station(4, 2, 50*time.Millisecond, http.StatusServiceUnavailable, "2"), 12)
		c, err := virtualcopy.Fit("ledger", r, virtualcopy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Workers != 4 || c.Queue != 2 || c.RejectStatus != 503 || c.RetryAfter != 2*time.Second || c.Rate != nil ||
			c.Method != "POST" || c.Path != "/orders" || c.Slowdown != nil || c.ServiceConcurrency != 1 {
			t.Errorf("station copy %+v", c)
		}
		if q := c.Service[7]; q.Q != 0.5 || q.Seconds < 0.050 || q.Seconds > 0.0502 {
			t.Errorf("median service %+v, want 50 ms", q)
		}
		if said := strings.Join(c.Said, "\n"); !strings.Contains(said, "workers: 4, the plateau 80/s") || !strings.Contains(said, "queue: 2, refusals beginning at concurrency 7") {
			t.Errorf("said:\n%s", said)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := probed(t, limited(30, 10*time.Millisecond), 8)
		c, err := virtualcopy.Fit("geo", r, virtualcopy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Rate == nil || c.Rate.PerSecond < 29 || c.Rate.PerSecond > 31 || c.Rate.Status != 429 || c.Rate.RetryAfter != time.Second || c.Rate.Burst != 1 || c.Queue != -1 {
			t.Errorf("rate copy %+v (rate %+v)", c, c.Rate)
		}
		if said := strings.Join(c.Said, "\n"); !strings.Contains(said, "burst: not in the data") {
			t.Errorf("said:\n%s", said)
		}
	})
}

// What the probe could not tell is refused unless given: a probe that saw
// no refusal has no queue limit, one that reached no plateau no workers.
func TestFitSaysWhatItCannotKnow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := probed(t, station(8, 0, 20*time.Millisecond, 503, ""), 4)
		if _, err := virtualcopy.Fit("ledger", r, virtualcopy.Options{}); err == nil || !strings.Contains(err.Error(), "give --workers ledger=N") {
			t.Errorf("no plateau: %v", err)
		}
		w, q := 8, -1
		c, err := virtualcopy.Fit("ledger", r, virtualcopy.Options{Workers: &w, Queue: &q})
		if err != nil || c.Workers != 8 || c.Queue != -1 {
			t.Errorf("given: %+v, %v", c, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := probed(t, station(2, 0, 20*time.Millisecond, 503, ""), 6)
		r.RejectionsBeginAt = nil // as if it had stopped before its refusals
		if _, err := virtualcopy.Fit("ledger", r, virtualcopy.Options{}); err == nil || !strings.Contains(err.Error(), "give --queue ledger=N") {
			t.Errorf("no refusal: %v", err)
		}
	})
}

// A copy probed as its original was gives the same knee and first
// refusal, and a plateau and service time within Tolerance: for a station
// of workers and queue slots with 503s beyond, and for a token bucket
// with 429s and Retry-After, each a service written here.
func TestCopyIsFaithfulToItsOriginal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		original func() http.Handler // made in the test's bubble, on its fake clock
		max      int
	}{
		{"ledger", func() http.Handler { return station(4, 2, 50*time.Millisecond, http.StatusServiceUnavailable, "2") }, 12},
		{"geo", func() http.Handler { return limited(30, 10*time.Millisecond) }, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				original := probed(t, tc.original(), tc.max)
				c, err := virtualcopy.Fit(tc.name, original, virtualcopy.Options{})
				if err != nil {
					t.Fatal(err)
				}
				copies := mocktest.StartCopies(t, mocktest.CopiesOptions{InMemory: true,
					Config: config.Copies{Seed: 7, TimeScale: 1, Copies: []config.Virtual{c.Virtual("127.0.0.1:0")}}})
				cfg := original.Plan.Config(copies.URLs[tc.name] + c.Path)
				cfg.Dial = copies.Dial
				copied, err := probe.Run(context.Background(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				n, err := virtualcopy.WriteComparison(&b, tc.name, virtualcopy.Compare(original, copied))
				if err != nil || n != 0 {
					t.Errorf("%d figures differ:\n%s\nthe copy:\n%s", n, b.String(), strings.Join(c.Said, "\n"))
				}
				t.Logf("\n%s", b.String())
			})
		})
	}
}

// A copy answers a success with the status its original's successes got
// (a ledger's 201), and, run for a pipeline, with one the pipeline's
// dependency counts as a success: a pipeline that takes only 202 gets
// 202, said.
func TestCopyAnswersWithTheOriginalsSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		created := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(10 * time.Millisecond)
			w.WriteHeader(http.StatusCreated)
		})
		r := probed(t, created, 2)
		if got := r.Steps[0].OKStatuses; got["201"] != r.Steps[0].OK || len(got) != 1 {
			t.Errorf("the probe's successes by status %v, of %d", got, r.Steps[0].OK)
		}
		w, q := 4, -1
		c, err := virtualcopy.Fit("ledger", r, virtualcopy.Options{Workers: &w, Queue: &q})
		if err != nil || c.OKStatus != http.StatusCreated {
			t.Fatalf("copy answers %d (%v), want 201", c.OKStatus, err)
		}
		c.AnswerAs(&pipeline.Dependency{Name: "ledger", Success: []int{200, 201}})
		if c.OKStatus != http.StatusCreated {
			t.Errorf("a pipeline that takes 201: the copy answers %d", c.OKStatus)
		}
		c.AnswerAs(&pipeline.Dependency{Name: "ledger", Success: []int{202}})
		if said := strings.Join(c.Said, "\n"); c.OKStatus != http.StatusAccepted || !strings.Contains(said, "success: 202, the first success of the pipeline's ledger") {
			t.Errorf("a pipeline that takes only 202: the copy answers %d; said:\n%s", c.OKStatus, said)
		}
	})
}
