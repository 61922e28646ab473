package pipeline_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// Answering refuses a dependency whose service says, to OPTIONS on the
// dependency's rendered path (its headers sent), that the path is not
// there (404) or does not take the method (405 or 501 with an Allow that
// lacks it); every other answer, and no answer, passes. The service is
// sent one OPTIONS a dependency and nothing else.
func TestAnswering(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex // the handler's goroutine and the test's
		status int
		allow  []string
		seen   []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		for _, a := range allow {
			w.Header().Add("Allow", a)
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	p, err := pipeline.Parse("shop.yaml", []byte(`name: shop
dependencies:
  - name: stock
    method: GET
    path: /stock/{{.ID}}?step={{.Step}}
    headers: {Authorization: "Bearer {{.Index}}"}
steps:
  - dependency: stock
    required: true
`))
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/stock/" + pipeline.AnswerID + "?step=1"
	for _, tc := range []struct {
		status int
		allow  []string // Allow headers
		want   string   // the error; "" passes
	}{
		{404, nil, "dependency stock: OPTIONS " + url + " answered 404 Not Found: no such path for its GET calls"},
		{405, []string{"POST, PUT"}, "dependency stock: OPTIONS " + url + " answered 405 Method Not Allowed, Allow: POST, PUT: not its method GET"},
		{405, []string{"POST", "PUT"}, "dependency stock: OPTIONS " + url + " answered 405 Method Not Allowed, Allow: POST, PUT: not its method GET"},
		{501, []string{"POST"}, "dependency stock: OPTIONS " + url + " answered 501 Not Implemented, Allow: POST: not its method GET"},
		{405, []string{"HEAD, get"}, ""},
		{405, nil, ""},
		{501, nil, ""},
		{204, []string{"POST"}, ""},
		{200, nil, ""},
		{400, nil, ""},
		{401, nil, ""},
		{500, nil, ""},
		{302, nil, ""},
	} {
		mu.Lock()
		status, allow, seen = tc.status, tc.allow, nil
		mu.Unlock()
		err := p.Answering(context.Background(), nil, map[string]string{"stock": srv.URL})
		mu.Lock()
		got := seen
		mu.Unlock()
		var ae *pipeline.AnswerError
		if tc.want == "" && err != nil || tc.want != "" && (!errors.As(err, &ae) || err.Error() != tc.want) {
			t.Errorf("%d, Allow %q: %v; want %q", tc.status, tc.allow, err, tc.want)
		}
		if want := "OPTIONS /stock/" + pipeline.AnswerID + "?step=1 Bearer 0"; len(got) != 1 || got[0] != want {
			t.Errorf("the service saw %q; want [%s]", got, want)
		}
	}
	if err := p.Answering(context.Background(), nil, map[string]string{"stock": "http://127.0.0.1:1"}); err != nil {
		t.Errorf("no answer: %v; want it passed (Accepting says a service is down)", err)
	}
	if err := p.Answering(context.Background(), nil, nil); err != nil {
		t.Errorf("no base: %v", err)
	}
}

// A service that accepts the connection and answers nothing within
// AnswerTimeout is said to be silent, at once, not passed on to time
// out every record's call (on a fake clock over an in-memory wire).
func TestAnsweringASilentService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		p, err := pipeline.Parse("p.yaml", []byte("name: p\ndependencies:\n  - {name: stock, method: GET, path: /stock}\nsteps:\n  - {dependency: stock, required: true}\n"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = p.Answering(context.Background(), dial, map[string]string{"stock": url})
		var silent *pipeline.SilentError
		if !errors.As(err, &silent) || silent.Dependency != "stock" || time.Since(start) != pipeline.AnswerTimeout {
			t.Errorf("%v after %v; want a SilentError of stock after %v", err, time.Since(start), pipeline.AnswerTimeout)
		}
	})
}
