package exptest

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// OwnPipeline is a pipeline of two services of one's own: stock, an
// optional lookup (GET) behind a token bucket that answers 429, and
// orders, the write (POST), 3 workers with 3 queue slots and 503 beyond.
// Their base URLs point nowhere: an experiment runs it against virtual
// copies.
const OwnPipeline = `name: shop
dependencies:
  - name: stock
    base_url: http://127.0.0.1:9
    method: GET
    path: /stock/{{.ID}}
    success: [200]
    rejection: [429, 503]
  - name: orders
    base_url: http://127.0.0.1:9
    method: POST
    path: /orders
    body: '{"id":{{json .ID}}}'
    success: [200, 201]
    rejection: [429, 503]
steps:
  - dependency: stock
  - dependency: orders
    required: true
`

// OwnSpec is an experiment on OwnPipeline's services, run against copies
// fitted from their probes (stock.json, orders.json beside it): C2, the
// strategy advised from probes of the copies, and a strategy file of
// one's own (mine.yaml: 3 write permits), as probed and with orders three
// times as slow or with half its workers.
const OwnSpec = `name: own
pipeline: shop.yaml
virtual:
  stock: {probe: stock.json}
  orders: {probe: orders.json}
strategy_files: {mine: mine.yaml}
records: 30
runs: 3
time_scale: 0.1
call_timeout: 200s
permit_timeout: 100s
seed: 1
strategies: [C2, advised, mine]
scenarios:
  - as-probed
  - name: slow-orders
    orders: {service_time: 3}
  - name: half-orders
    orders: {workers: 0.5}
cpus:
  - {name: cpus-1, cpus: 1}
advise:
  target_rate: 0
  step: 5s
  warm_up: 500ms
  probes:
    stock: {concurrency: [1, 2, 4]}
    orders: {concurrency: [1, 2, 3, 4, 6, 8], body: '{"id":{{json .ID}}}'}
`

// OwnStrategy is OwnSpec's strategy file: 10 records in flight, 3 write
// permits, stock unbounded but its rate.
const OwnStrategy = `strategy:
  name: mine
  records_in_flight: 10
  permits:
    orders: 3
`

// OwnServices writes, in dir, OwnPipeline (shop.yaml), OwnStrategy
// (mine.yaml) and a probe of each of its services (stock.json,
// orders.json), each probed on a fake clock over an in-memory wire: a
// token bucket of 50 calls a second (burst 1) in front of a 20 ms
// service, and 3 workers of 20 ms with 3 queue slots. It returns dir.
func OwnServices(t *testing.T, dir string) string {
	t.Helper()
	WriteFile(t, dir, "shop.yaml", OwnPipeline)
	WriteFile(t, dir, "mine.yaml", OwnStrategy)
	synctest.Test(t, func(t *testing.T) {
		writeProbe(t, filepath.Join(dir, "stock.json"), limited(50, 20*time.Millisecond), http.MethodGet, "/stock/1", 8)
		writeProbe(t, filepath.Join(dir, "orders.json"), testkit.Station(3, 3, 20*time.Millisecond, http.StatusServiceUnavailable, ""), http.MethodPost, "/orders", 10)
	})
	return dir
}

// limited is a token bucket of perSecond calls a second in front of a
// service of service each; 429 beyond.
func limited(perSecond float64, service time.Duration) http.Handler {
	lim := rate.NewLimiter(rate.Limit(perSecond), 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !lim.Allow() {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		time.Sleep(service)
		w.WriteHeader(http.StatusOK)
	})
}

// writeProbe probes h at method and path, at concurrency 1 to max, and
// writes the probe's JSON to file.
func writeProbe(t *testing.T, file string, h http.Handler, method, path string, max int) {
	url, dial := mocktest.Serve(t, h)
	cfg := probe.Default()
	cfg.Target, cfg.Dial, cfg.Method = url+path, dial, method
	if method == http.MethodPost {
		cfg.Body = `{"id":"{{.ID}}"}`
	}
	cfg.Concurrency = nil
	cfg.MaxConcurrency, cfg.Step, cfg.WarmUp = max, 2*time.Second, 500*time.Millisecond
	r, err := probe.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Dir(file), filepath.Base(file), string(b))
}
