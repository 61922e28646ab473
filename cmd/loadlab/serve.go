package main

import (
	"context"
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

// begin starts a command whose configuration check gave check (an error is
// bad input: exit 2): it returns the context that SIGTERM or Ctrl-C
// cancels, and the Registerer served on metricsAddr (nil when empty); done
// undoes both.
func begin(metricsAddr string, check error) (context.Context, prometheus.Registerer, func(), error) {
	if check != nil {
		return nil, nil, nil, usageErr("%v", check)
	}
	reg, stopMetrics, err := serveMetrics(metricsAddr)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx, reg, func() { stop(); stopMetrics() }, nil
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
		return nil, nil, usageErr("metrics-listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return reg, func() { _ = srv.Close() }, nil
}
