package virtual

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Timeouts of a copy's HTTP server beside the configured ones, as the
// lab's service has them.
const (
	readTimeout = 30 * time.Second
	idleTimeout = 120 * time.Second
)

// Start serves every copy of cfg on its own Listen address (port 0: one
// the system chooses) in the background. It returns each copy's base URL
// by name (the port it really listens on), and stop, which shuts every
// copy down as SIGTERM would the lab's service: no new connections,
// requests in flight finish within cfg's shutdown timeout. stop returns
// nil after a clean shutdown, mockservice.ErrForcedShutdown if the timeout
// cut requests short, or the error that ended a copy's serving earlier;
// it may be called more than once.
func Start(cfg config.Copies) (urls map[string]string, stop func() error, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("virtual: %w", err)
	}
	var lns []net.Listener
	for _, v := range cfg.Copies {
		ln, err := net.Listen("tcp", v.Listen)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, nil, fmt.Errorf("virtual: %s: listen: %w", v.Name, err)
		}
		lns = append(lns, ln)
	}
	_, urls, stop, err = StartOn(cfg, lns)
	return urls, stop, err
}

// StartOn is Start on listeners of the caller's, lns[i] for copy i (an
// in-memory network's, say; the copies' Listen is not used). It also
// returns the copies. The copies own lns from then on.
func StartOn(cfg config.Copies, lns []net.Listener) (copies []*Copy, urls map[string]string, stop func() error, err error) {
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	if len(lns) != len(cfg.Copies) {
		closeAll()
		return nil, nil, nil, fmt.Errorf("virtual: %d listeners for %d copies", len(lns), len(cfg.Copies))
	}
	for i := range cfg.Copies {
		c, err := New(cfg, i)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		copies = append(copies, c)
	}
	cfg = cfg.WithDefaults()
	urls = map[string]string{}
	var servers []*http.Server
	var served sync.WaitGroup
	serveErrs := make([]error, len(copies))
	for i, c := range copies {
		srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
		servers = append(servers, srv)
		served.Go(func() {
			if err := srv.Serve(lns[i]); !errors.Is(err, http.ErrServerClosed) {
				serveErrs[i] = fmt.Errorf("virtual: %s: serve: %w", c.Name(), err)
			}
		})
		urls[c.Name()] = "http://" + lns[i].Addr().String()
	}
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			result = shutdown(servers, cfg.ShutdownTimeout)
			served.Wait()
			if result == nil {
				result = errors.Join(serveErrs...)
			}
		})
		return result
	}
	return copies, urls, stop, nil
}

// shutdown shuts every server down at once, within one timeout for all;
// past it, the connections still open are closed.
func shutdown(servers []*http.Server, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() {
			if errs[i] = srv.Shutdown(ctx); errs[i] != nil {
				_ = srv.Close()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, context.DeadlineExceeded) {
			return mockservice.ErrForcedShutdown
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("virtual: shutdown: %w", err)
	}
	return nil
}
