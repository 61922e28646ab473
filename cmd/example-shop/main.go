// Command example-shop is a small service of one's own with two
// dependencies, written apart from loadlab's mock service, for the worked
// example of an experiment on one's own services (experiments/shop): stock
// (GET /stock/{id}), a lookup behind a token bucket that answers 429 past
// its rate, and orders (POST /orders), a pool of workers with a bounded
// queue that answers 503 past it. Each listens on a port of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/time/rate"
)

func main() {
	fs := flag.NewFlagSet("example-shop", flag.ContinueOnError)
	stockAddr := fs.String("stock", "127.0.0.1:9100", "stock's address (GET /stock/{id})")
	ordersAddr := fs.String("orders", "127.0.0.1:9101", "orders' address (POST /orders)")
	stockRate := fs.Float64("stock-rate", 150, "stock's token bucket: lookups per second (burst 1); 429 beyond")
	stockTime := fs.Duration("stock-time", 10*time.Millisecond, "stock's median service time (±20%, uniform)")
	workers := fs.Int("workers", 4, "orders' workers")
	queue := fs.Int("queue", 4, "orders' queue slots; 503 beyond")
	orderTime := fs.Duration("order-time", 25*time.Millisecond, "orders' median service time (±20%, uniform)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers := []*http.Server{
		{Addr: *stockAddr, Handler: stock(*stockRate, *stockTime), ReadHeaderTimeout: 5 * time.Second},
		{Addr: *ordersAddr, Handler: orders(*workers, *queue, *orderTime), ReadHeaderTimeout: 5 * time.Second},
	}
	errs := make(chan error, len(servers))
	for _, s := range servers {
		go func() { errs <- s.ListenAndServe() }()
	}
	fmt.Fprintf(os.Stderr, "example-shop: stock at http://%s/stock/{id} (%g/s, then 429), orders at http://%s/orders (%d workers, %d queue slots, then 503)\n",
		*stockAddr, *stockRate, *ordersAddr, *workers, *queue)
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "example-shop:", err)
		os.Exit(1)
	case <-ctx.Done():
	}
	for _, s := range servers {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(sctx)
		cancel()
	}
}

// around is d ±20%, uniform.
func around(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// stock answers GET /stock/{id} after about service, perSecond a second;
// past its rate 429 at once.
func stock(perSecond float64, service time.Duration) http.Handler {
	lim := rate.NewLimiter(rate.Limit(perSecond), 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/stock/") {
			http.NotFound(w, r)
			return
		}
		if !lim.Allow() {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		time.Sleep(around(service))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"in_stock":true}`)
	})
}

// orders answers POST /orders with workers serving for about service
// each and slots waiting for one; past them 503 at once.
func orders(workers, slots int, service time.Duration) http.Handler {
	free := make(chan struct{}, workers)
	for range workers {
		free <- struct{}{}
	}
	admitted := make(chan struct{}, workers+slots)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/orders" {
			http.NotFound(w, r)
			return
		}
		select {
		case admitted <- struct{}{}:
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		defer func() { <-admitted }()
		<-free
		time.Sleep(around(service))
		free <- struct{}{}
		w.WriteHeader(http.StatusCreated)
	})
}
