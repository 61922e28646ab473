package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A pipeline whose dependency has the wrong method for the service is
// refused before the first record, exit 2, naming the
// dependency, the URL, the method, what the service answered and what to
// fix; the service is sent nothing but one OPTIONS per dependency. The
// service routes by method and path (Go's ServeMux): OPTIONS on a path of
// another method is 405 with Allow, on no path 404. The right pipeline
// passes and runs: its dependencies at the target and at a base_url of
// their own. The lab's pipeline, against a service that is not the lab's
// mock, is refused saying so.
func TestPreflightRefusesAWrongPathOrMethod(t *testing.T) {
	t.Parallel()
	var calls, options atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stock/{id}", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusCreated)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			options.Add(1)
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	shop := func(name, stockMethod, ordersPath string) string {
		f := filepath.Join(dir, name)
		writeFile(t, f, fmt.Sprintf(`name: shop
dependencies:
  - name: stock
    base_url: %s
    method: %s
    path: /stock/{{.ID}}
  - name: orders
    path: %s
    body: '{"id":{{json .ID}}}'
steps:
  - dependency: stock
  - dependency: orders
    required: true
`, srv.URL, stockMethod, ordersPath))
		return f
	}
	run1 := func(pipe string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run([]string{"run", "--target", srv.URL, "--pipeline", pipe, "--permits", "stock=2,orders=2", "--records", "20"}, &out, &errb)
		return code, out.String(), errb.String()
	}
	wrongPath := shop("path.yaml", "GET", "/order")
	wrongMethod := shop("method.yaml", "POST", "/orders")
	// A 404 to OPTIONS alone is no proof on one's own services (a handler
	// of one method, a router's default, a lookup of an unknown id): it is
	// said, and the run goes on, its calls' 404s counted.
	if code, _, stderr := run1(wrongPath); code != 1 || calls.Load() == 0 || !strings.Contains(stderr, "orders: status 404") {
		t.Errorf("path.yaml: exit %d, %d calls, %q; want 1, the calls sent and their 404s counted", code, calls.Load(), stderr)
	}
	for _, tc := range []struct{ pipe, want string }{
		{wrongMethod, "loadlab: run: dependency stock: OPTIONS " + srv.URL + "/stock/loadlab-preflight answered 405 Method Not Allowed, Allow: GET, HEAD: " +
			"not its method POST; fix the dependency's method or path in " + wrongMethod + "\n"},
	} {
		calls.Store(0)
		options.Store(0)
		code, _, stderr := run1(tc.pipe)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("%s: exit %d, %q; want 2 and %q", filepath.Base(tc.pipe), code, stderr, tc.want)
		}
		if calls.Load() != 0 || options.Load() > 2 {
			t.Errorf("%s: the service was sent %d calls and %d OPTIONS; want none and at most one a dependency", filepath.Base(tc.pipe), calls.Load(), options.Load())
		}
	}
	var out, errb bytes.Buffer
	want := "loadlab: run: dependency enrichment: OPTIONS " + srv.URL + "/enrich answered 404 Not Found: no such path for its POST calls; " +
		"the lab's pipeline calls a loadlab mock service's routes: is --target one? (your own services: --pipeline FILE)\n"
	if code := run([]string{"run", "--target", srv.URL, "--records", "5"}, &out, &errb); code != exitUsage || errb.String() != want {
		t.Errorf("the lab's pipeline: exit %d, %q; want 2 and %q", code, errb.String(), want)
	}
	calls.Store(0)
	options.Store(0)
	code, stdout, stderr := run1(shop("right.yaml", "GET", "/orders"))
	if code != 0 || !strings.Contains(stdout, "Accepted 20 of 20 records") || calls.Load() != 40 || options.Load() < 2 {
		t.Errorf("right pipeline: exit %d, %d calls, %d OPTIONS; want 0, 40 calls (20 records of 2) and one OPTIONS a dependency at least: %s%s",
			code, calls.Load(), options.Load(), stdout, stderr)
	}
}
