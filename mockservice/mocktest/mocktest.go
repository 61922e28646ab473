// Package mocktest runs the real mock service, or virtual copies of a
// user's dependencies (StartCopies), for the length of a test or
// benchmark: the one way every package's tests start them. (Real parts,
// not mocks of them: these are the servers themselves.) On loopback by
// default; over an in-memory Wire for tests inside testing/synctest
// bubbles, where the server's timers and the client's run on the bubble's
// fake clock.
package mocktest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Options say which mock service to start.
type Options struct {
	// Config is the service's configuration; its TimeScale is the one the
	// test gives its clients too (Mock.TimeScale). Listen is ignored.
	Config config.Config
	// Instances serves that many independent instances behind one address
	// (mockservice --instances n); 0 is one.
	Instances int
	// InMemory serves on an in-memory Network (Network, else a new one)
	// instead of a loopback port: call Start inside the synctest bubble
	// that uses it, and reach the service only through the Mock's Dial,
	// HTTP or Client. Services given one Network reach each other.
	InMemory bool
	Network  *Network
}

// Mock is a running mock service (or one instance of several).
type Mock struct {
	URL     string
	Service *mockservice.Service
	// Stop shuts it down as SIGTERM would and returns what Serve returned;
	// it is safe to call more than once, and cleanup calls it.
	Stop func() error
	// Client drives its health, admin and metrics routes.
	Client api.Client
	// HTTP reaches it (over the Network, when in memory).
	HTTP *http.Client
	// Dial opens a connection to it: nil on loopback (the system's
	// dialer), the Network's Dial in memory. Give it to the client under
	// test (records.Config.Dial, …).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TimeScale is the service's time scale, to give the client as well.
	TimeScale float64
	// Instances are every instance, this one first (URL http://…/i/k; one
	// instance is the root).
	Instances []*Mock
}

// Start serves o.Config until tb ends.
func Start(tb testing.TB, o Options) *Mock {
	tb.Helper()
	cfg, n := o.Config, max(o.Instances, 1)
	var (
		in   *mockservice.Instances
		urls []string
		stop func() error
		err  error
		dial func(ctx context.Context, network, addr string) (net.Conn, error)
	)
	if o.InMemory || o.Network != nil {
		nw := o.Network
		if nw == nil {
			nw = NewNetwork()
		}
		var ln net.Listener
		if ln, err = nw.Listen(nw.freeHost()); err != nil {
			tb.Fatal(err)
		}
		dial = nw.Dial
		in, urls, stop, err = mockservice.StartOn(cfg, n, ln)
	} else {
		cfg.Listen = "127.0.0.1:0"
		in, urls, stop, err = mockservice.StartInstances(cfg, n)
	}
	if err != nil {
		tb.Fatal(err)
	}
	hc := serveUntilEnd(tb, stop, dial)
	var all []*Mock
	for k, svc := range in.Services {
		all = append(all, &Mock{URL: urls[k], Service: svc, Stop: stop, HTTP: hc, Dial: dial, TimeScale: cfg.TimeScale,
			Client: api.Client{BaseURL: urls[k], Token: cfg.AdminToken, HTTP: hc, Dial: dial}})
	}
	for _, m := range all {
		m.Instances = all
	}
	return all[0]
}

// serveUntilEnd is the client of a service stop ends when tb does; with
// dial (the in-memory wire, on a fake clock) the cleanup then lets an
// hour pass, so that a service stopped at once ends inside the bubble
// what it had accepted, as synctest requires.
func serveUntilEnd(tb testing.TB, stop func() error, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	// Redirects are answers, as loadlab's own clients take them.
	hc := &http.Client{Transport: &http.Transport{DialContext: dial, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tb.Cleanup(func() {
		_ = stop()
		hc.CloseIdleConnections()
		if dial != nil {
			time.Sleep(time.Hour) // on the fake clock: costs nothing
		}
	})
	return hc
}
