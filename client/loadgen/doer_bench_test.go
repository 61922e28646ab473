package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary doubles as a minimal HTTP endpoint (200 "ok" to any
// request, the body read) when LOADGEN_ENDPOINT is set, pinned to the CPU
// it names, so a benchmark measures the generator's CPU apart from the
// endpoint's.
func TestMain(m *testing.M) {
	if cpu := os.Getenv("LOADGEN_ENDPOINT"); cpu != "" {
		serveEndpoint(cpu)
		return
	}
	os.Exit(m.Run())
}

func serveEndpoint(cpu string) {
	if n, err := strconv.Atoi(cpu); err == nil {
		pinProcess(n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }() // ends with its parent
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte("ok"))
	}))
}

// pinProcess sets the affinity of every thread of this process to one CPU.
func pinProcess(cpu int) {
	var set unix.CPUSet
	set.Set(cpu)
	setAffinity(&set)
}

// unpinProcess gives every thread of this process both CPUs back.
func unpinProcess() {
	var all unix.CPUSet
	all.Set(0)
	all.Set(1)
	setAffinity(&all)
}

func setAffinity(set *unix.CPUSet) {
	tasks, _ := filepath.Glob("/proc/self/task/*")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(filepath.Base(t)); err == nil {
			_ = unix.SchedSetaffinity(tid, set)
		}
	}
}

// startEndpoint runs the endpoint in a child process pinned to cpu.
func startEndpoint(b *testing.B, cpu int) *url.URL {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LOADGEN_ENDPOINT="+strconv.Itoa(cpu))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse("http://" + strings.TrimSpace(line) + "/x")
	return u
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDoer measures each HTTP client of the generator on its own: b.N
// requests from 8 concurrent senders, this process pinned to CPU 0 and the
// endpoint to CPU 1. cpu-µs/req is this process's CPU time per request:
// the cost of sending, which bounds the rate one core can generate.
// Compare the clients side by side in interleaved rounds:
//
//	for i in 1 2 3 4 5 6; do go test -run '^$' -bench Doer -benchtime 20000x ./client/loadgen; done
func BenchmarkDoer(b *testing.B) {
	target := startEndpoint(b, 1)
	pinProcess(0)
	defer unpinProcess()
	for _, c := range []struct {
		name string
		new  func() client
	}{
		{"net-http", func() client { return newNetHTTP(target, 64, RealClock, nil) }},
		{"fasthttp", func() client { return newFastHTTP(target, RealClock) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := c.new()
			defer d.close()
			const senders = 8
			ids := make(chan int)
			var wg sync.WaitGroup
			var failed sync.Map
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for range senders {
				wg.Go(func() {
					conn := d.newConn()
					for i := range ids {
						id := requestID(i)
						status, _, err := conn.do(context.Background(), time.Now().Add(10*time.Second), id)
						if err != nil || status != http.StatusOK {
							failed.Store(i, fmt.Sprint(status, err))
						}
					}
				})
			}
			for i := range b.N {
				ids <- i
			}
			close(ids)
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
			failed.Range(func(k, v any) bool { b.Fatalf("request %v: %v", k, v); return false })
		})
	}
}
