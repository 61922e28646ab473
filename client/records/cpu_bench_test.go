package records_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
)

// setAffinity pins every thread of this process to cpu (or to every CPU
// when cpu < 0).
func setAffinity(cpu int) {
	var set unix.CPUSet
	if cpu < 0 {
		for c := range runtime.NumCPU() {
			set.Set(c)
		}
	} else {
		set.Set(cpu)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(filepath.Base(t)); err == nil {
			_ = unix.SchedSetaffinity(tid, &set)
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecordCPU measures the record client's CPU per record: a batch
// of RECORDS_N records (default 3000) of the lab pipeline, healthy, at time
// scale 0.1, per strategy of RECORDS_STRATEGIES (default "C2 C4"), this
// process pinned to CPU 0 with GOMAXPROCS 1 and the mock service
// (cmd/mockservice, built for the benchmark) pinned to CPU 1.
// cpu-µs/record is this process's user and system time over the batch per
// record (4 calls each), every record run to its end (C2 may lose a write
// or two to a 503: complete-% says). The names "net-http" and "fasthttp"
// are floors, not strategies: the same records' calls, rendered before the
// CPU is read, sent by 32 goroutines (C2's records in flight) through a
// bare client — net/http on loadlab's transport, which the strategies use,
// or fasthttp, which the open generator uses — and nothing else: no
// budgets, no tracing, no counting. Side by side, in interleaved rounds:
//
//	for i in 1 2 3; do RECORDS_STRATEGIES="net-http fasthttp C2 C4" go test -run '^$' -bench RecordCPU -benchtime 1x ./client/records; done
func BenchmarkRecordCPU(b *testing.B) {
	url := startBenchMock(b, 1)
	setAffinity(0)
	procs := runtime.GOMAXPROCS(1)
	defer func() { runtime.GOMAXPROCS(procs); setAffinity(-1) }()
	n := 3000
	if s := os.Getenv("RECORDS_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	strategies := strings.Fields(os.Getenv("RECORDS_STRATEGIES"))
	if len(strategies) == 0 {
		strategies = []string{"C2", "C4"}
	}
	for _, name := range strategies {
		b.Run(name, func(b *testing.B) {
			runtime.GOMAXPROCS(1) // testing sets it for each benchmark
			var cpu time.Duration
			complete := 0
			for range b.N {
				if name == "net-http" || name == "fasthttp" {
					c, done := floor(b, name, url, n)
					cpu += c
					complete += done
					continue
				}
				rc := records.DefaultConfig()
				rc.Target, rc.Records, rc.Reset, rc.TimeScale = url, n, true, 0.1
				var err error
				if rc.Strategy, err = strategy.Parse(name); err != nil {
					b.Fatal(err)
				}
				c0 := processCPU()
				res, err := records.Run(context.Background(), rc)
				cpu += processCPU() - c0
				if err != nil {
					b.Fatal(err)
				}
				if res.Records != n || res.Interrupted+res.NotStarted > 0 {
					b.Fatalf("%s: %d records of %d, %d interrupted, %d not started", name, res.Records, n, res.Interrupted, res.NotStarted)
				}
				complete += res.Complete
			}
			per := float64(cpu.Microseconds()) / float64(b.N*n)
			b.ReportMetric(per, "cpu-µs/record")
			b.ReportMetric(per/4, "cpu-µs/call")
			b.ReportMetric(100*float64(complete)/float64(b.N*n), "complete-%")
		})
	}
}

// floorCall is one of a record's calls, rendered.
type floorCall struct {
	method, url string
	body        []byte
}

// floor sends n lab records' calls to url through a bare HTTP client
// ("net-http": a net/http client on loadlab's transport; "fasthttp": a
// fasthttp host client), 32 records at a time, each record's calls in
// order, and returns the CPU it took and how many records had every call
// answered 2xx. The requests are rendered before the CPU is read.
func floor(b *testing.B, client, url string, n int) (time.Duration, int) {
	p := pipeline.Lab()
	if err := (api.Client{BaseURL: url}).Reset(context.Background()); err != nil {
		b.Fatal(err)
	}
	calls := make([][]floorCall, n)
	prefix := fmt.Sprintf("floor-%d-", time.Now().UnixNano())
	for i := range calls {
		d := pipeline.Data{ID: fmt.Sprintf("%s%05d", prefix, i), Index: i, Complete: true}
		for _, st := range p.Steps {
			dep := p.Dependency(st.Dependency)
			for d.Step = 1; d.Step <= st.Repeat; d.Step++ {
				path, body, err := dep.Render(d)
				if err != nil {
					b.Fatal(err)
				}
				calls[i] = append(calls[i], floorCall{dep.Method, url + path, bytes.Clone(body)})
			}
		}
	}
	const inFlight = 32
	do := netHTTPDo(inFlight)
	if client == "fasthttp" {
		do = fastHTTPDo(url, inFlight)
	}
	var next, complete atomic.Int64
	c0 := processCPU()
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				ok := true
				for _, c := range calls[i] {
					status, err := do(c)
					if err != nil {
						b.Error(err)
						return
					}
					ok = ok && status/100 == 2
				}
				if ok {
					complete.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return processCPU() - c0, int(complete.Load())
}

// netHTTPDo sends a call through net/http on loadlab's transport.
func netHTTPDo(inFlight int) func(floorCall) (int, error) {
	client := transport.New(inFlight)
	return func(c floorCall) (int, error) {
		req, _ := http.NewRequest(c.method, c.url, bytes.NewReader(c.body))
		if len(c.body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}

// fastHTTPDo sends a call through a fasthttp host client.
func fastHTTPDo(url string, inFlight int) func(floorCall) (int, error) {
	hc := &fasthttp.HostClient{Addr: strings.TrimPrefix(url, "http://"), MaxConns: inFlight}
	return func(c floorCall) (int, error) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(c.method)
		req.SetRequestURI(c.url)
		if len(c.body) > 0 {
			req.Header.SetContentType("application/json")
			req.SetBody(c.body)
		}
		err := hc.Do(req, resp)
		return resp.StatusCode(), err
	}
}

// startBenchMock builds and starts the mock service (cmd/mockservice,
// default configuration, time scale 0.1) pinned to cpu, and returns its
// URL.
func startBenchMock(b *testing.B, cpu int) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "mockservice")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mockservice").CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/mockservice: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--time-scale", "0.1", "--listen", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	// Its threads so far; those it starts later inherit the CPU.
	var set unix.CPUSet
	set.Set(cpu)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", cmd.Process.Pid))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(filepath.Base(t)); err == nil {
			_ = unix.SchedSetaffinity(tid, &set)
		}
	}
	return strings.Fields(strings.TrimPrefix(line, "mockservice listening on "))[0]
}
