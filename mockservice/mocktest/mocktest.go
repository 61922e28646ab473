// Package mocktest runs the real mock service on a loopback port for the
// length of a test or benchmark: the one way every package's tests start
// it. (Real parts, not mocks of them: this is the server itself.)
package mocktest

import (
	"testing"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Mock is a running mock service.
type Mock struct {
	URL     string
	Service *mockservice.Service
	// Stop shuts it down as SIGTERM would and returns what Serve returned;
	// it is safe to call more than once, and cleanup calls it.
	Stop func() error
	// Client drives its health, admin and metrics routes.
	Client api.Client
}

// Start serves cfg on 127.0.0.1, on a port of the system's choosing, until
// tb ends.
func Start(tb testing.TB, cfg config.Config) *Mock {
	tb.Helper()
	cfg.Listen = "127.0.0.1:0"
	svc, url, stop, err := mockservice.Start(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = stop() })
	return &Mock{URL: url, Service: svc, Stop: stop, Client: api.Client{BaseURL: url, Token: cfg.AdminToken}}
}

// StartInstances serves n independent instances of cfg behind one
// loopback port (mockservice --instances n) until tb ends; instance k's
// URL is its base, http://127.0.0.1:PORT/i/k (with n = 1, the root).
func StartInstances(tb testing.TB, cfg config.Config, n int) []*Mock {
	tb.Helper()
	cfg.Listen = "127.0.0.1:0"
	in, urls, stop, err := mockservice.StartInstances(cfg, n)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = stop() })
	var out []*Mock
	for k, svc := range in.Services {
		out = append(out, &Mock{URL: urls[k], Service: svc, Stop: stop, Client: api.Client{BaseURL: urls[k], Token: cfg.AdminToken}})
	}
	return out
}
