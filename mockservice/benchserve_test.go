package mockservice_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// TestMain serves, instead of testing, when MOCKSERVICE_BENCH_SERVE is
// "KIND ADDR": deploy/bench-mock.sh starts this test binary pinned to one
// core as the endpoint whose throughput it measures. KIND "mock" is the
// mock service with its default configuration but zero enrichment time;
// "bare" is a plain net/http handler doing the same JSON work on /enrich
// (bareEnrich), in a default http.Server; "bare-timeouts" is the same
// handler in an http.Server with the mock service's timeouts (read header,
// read, idle), which cost a deadline update or two per request. MOCKSERVICE_BENCH_CPUPROFILE=FILE writes a CPU
// profile of it until SIGTERM.
func TestMain(m *testing.M) {
	var kind, addr string
	if v := os.Getenv("MOCKSERVICE_BENCH_SERVE"); v != "" {
		if _, err := fmt.Sscan(v, &kind, &addr); err != nil {
			fmt.Fprintln(os.Stderr, "MOCKSERVICE_BENCH_SERVE:", err)
			os.Exit(2)
		}
		os.Exit(benchServe(kind, addr))
	}
	os.Exit(m.Run())
}

func benchServe(kind, addr string) int {
	if path := os.Getenv("MOCKSERVICE_BENCH_CPUPROFILE"); path != "" {
		// A CPU profile of the server until SIGTERM or SIGINT, to look
		// into where its time goes (go tool pprof -top BINARY PATH).
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "MOCKSERVICE_BENCH_CPUPROFILE:", err)
			return 2
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		go func() {
			<-sig
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(0)
		}()
	}
	var err error
	switch kind {
	case "bare":
		err = (&http.Server{Addr: addr, Handler: http.HandlerFunc(bareEnrich)}).ListenAndServe()
	case "bare-timeouts":
		srv := mockservice.NewHTTPServer(http.HandlerFunc(bareEnrich), config.Default().ReadHeaderTimeout)
		srv.Addr = addr
		err = srv.ListenAndServe()
	case "mock":
		cfg := fixedEnrichment(0)
		cfg.Listen = addr
		if _, _, _, err = mockservice.Start(cfg); err == nil {
			select {} // until killed
		}
	default:
		err = fmt.Errorf("unknown kind %q (bare, bare-timeouts or mock)", kind)
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// bareEnrich does the JSON work of the mock service's /enrich without the
// station: read one JSON object of bounded size, check it, encode the same
// answer.
func bareEnrich(w http.ResponseWriter, r *http.Request) {
	var req api.EnrichRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, api.MaxBodyBytes))
	err := dec.Decode(&req)
	if _, terr := dec.Token(); err != nil || !errors.Is(terr, io.EOF) || req.Check() != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{"record_id": req.RecordID, "step": req.Step,
		"value": fmt.Sprintf("enriched:%s:%d", req.RecordID, req.Step)})
}

// The bare handler that deploy/bench-mock.sh compares the mock service
// with answers /enrich byte for byte as the mock service does, and refuses
// what it refuses, so the comparison is of the same JSON work.
func TestBareEnrichAnswersAsTheMock(t *testing.T) {
	bare := httptest.NewServer(http.HandlerFunc(bareEnrich))
	defer bare.Close()
	mock := mocktest.Start(t, mocktest.Options{Config: fixedEnrichment(0)})
	for _, body := range []string{enrichBody, `{"record_id":"r1"}`, `{"record_id":"r1","step":1} {}`} {
		var answers []string
		var codes []int
		for _, base := range []string{bare.URL, mock.URL} {
			resp, err := http.Post(base+"/enrich", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers, codes = append(answers, string(b)), append(codes, resp.StatusCode)
		}
		if codes[0] != codes[1] || codes[0] == http.StatusOK && answers[0] != answers[1] {
			t.Errorf("%s: bare %d %q, mock %d %q", body, codes[0], answers[0], codes[1], answers[1])
		}
	}
}
