package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Session is a command between its checks and its end: the context that
// SIGINT or SIGTERM cancels, the Registerer served on --metrics-listen
// (nil without it), and, for a command that drains, Stop.
type Session struct {
	Ctx        context.Context
	Registerer prometheus.Registerer
	// Stop, when the command drains, is closed by the first SIGINT or
	// SIGTERM: begin no new work, let what is in flight finish within its
	// deadlines; the second signal cancels Ctx. Nil otherwise.
	Stop <-chan struct{}
	done func()
}

// Close stops the signal handling and the metrics server.
func (s Session) Close() { s.done() }

// Begin starts a command whose configuration check gave check (an error
// is bad input: exit 2). With drain non-nil the command drains on the
// first signal, saying so on drain.
func Begin(metricsAddr string, check error, drain io.Writer) (Session, error) {
	if check != nil {
		return Session{}, UsageErr("%v", check)
	}
	reg, stopMetrics, err := serveMetrics(metricsAddr)
	if err != nil {
		return Session{}, err
	}
	if drain == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		return Session{Ctx: ctx, Registerer: reg, done: func() { stop(); stopMetrics() }}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopCh, sigs := make(chan struct{}), make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(drain, "loadlab: stopping: no new work; what is in flight finishes within its deadlines (Ctrl-C again to abort)")
		close(stopCh)
		if _, ok := <-sigs; ok {
			cancel()
		}
	}()
	done := func() { signal.Stop(sigs); close(sigs); cancel(); stopMetrics() }
	return Session{Ctx: ctx, Registerer: reg, Stop: stopCh, done: done}, nil
}

// serveMetrics serves a fresh registry (with Go and process collectors)
// on addr until the returned stop is called. An empty addr serves nothing
// and returns a nil Registerer.
func serveMetrics(addr string) (prometheus.Registerer, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, UsageErr("metrics-listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return reg, func() { _ = srv.Close() }, nil
}
