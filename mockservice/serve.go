package mockservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
)

// Timeouts of the HTTP server; the read-header timeout is configured
// (config.Config.ReadHeaderTimeout).
const (
	readTimeout = 30 * time.Second
	idleTimeout = 120 * time.Second
)

// newHTTPServer is the HTTP server of a service, with its timeouts.
func newHTTPServer(h http.Handler, readHeaderTimeout time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
}

// ErrForcedShutdown is returned by Serve when in-flight work did not finish
// within the shutdown timeout and connections were closed under it.
var ErrForcedShutdown = errors.New("mockservice: shutdown timeout passed with requests in flight")

// Serve answers HTTP on ln until ctx is done, then stops accepting and lets
// requests in flight finish within the configured shutdown timeout. A
// connection that has not sent a request's headers within the configured
// read-header timeout is closed without an answer; a request's whole read,
// body included, is bounded by 30 s. It
// returns nil after a clean shutdown, ErrForcedShutdown if the timeout cut
// requests short, or the server's error.
func (s *Service) Serve(ctx context.Context, ln net.Listener) error {
	defer s.writes.close() // every write acknowledged is already synced
	return serveHandler(ctx, ln, s.Handler(), s.cfg)
}

// serveHandler is Serve's loop and shutdown for any of the services'
// handlers, with cfg's timeouts.
func serveHandler(ctx context.Context, ln net.Listener, h http.Handler, cfg config.Config) error {
	srv := newHTTPServer(h, cfg.ReadHeaderTimeout)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mockservice: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return ErrForcedShutdown
		}
		return fmt.Errorf("mockservice: shutdown: %w", err)
	}
	return nil
}

// Start serves a new service for cfg on cfg.Listen (e.g. 127.0.0.1:0) in
// the background. It returns the service, its base URL, and stop, which
// shuts it down as SIGTERM would and returns Serve's result.
func Start(cfg config.Config) (svc *Service, baseURL string, stop func() error, err error) {
	in, urls, stop, err := StartInstances(cfg, 1)
	if err != nil {
		return nil, "", nil, err
	}
	return in.Services[0], urls[0], stop, nil
}
