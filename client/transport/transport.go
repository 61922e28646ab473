// Package transport builds the HTTP clients that carry loadlab's load: a
// transport that keeps as many idle connections as there are calls in
// flight, so a strategy's concurrency reaches the target as concurrency and
// not as connection churn, and caps nothing behind the strategy's back.
package transport

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"
)

// idleSlack is how many idle connections are kept beyond the calls in flight.
const idleSlack = 16

// New returns a client whose transport keeps enough idle connections per
// host for inFlight concurrent calls. Go's default keeps two, so a
// strategy's concurrency would churn through new connections; nothing here
// caps connections per host. Timeouts belong to each call's context.
//
// Redirects are not followed: a 3xx is the target's answer, counted as
// such, and a foreign target is sent nothing but the load path.
func New(inFlight int) *http.Client { return NewDial(inFlight, nil) }

// Dialer opens a connection, as net.Dialer.DialContext does.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// NewDial is New with connections opened by dial (nil: the system's
// dialer, as New): an in-memory wire, in tests whose clock is fake.
func NewDial(inFlight int, dial Dialer) *http.Client {
	return &http.Client{CheckRedirect: NoRedirects, Transport: &http.Transport{
		DialContext:         dial,
		Proxy:               nil,
		MaxIdleConns:        inFlight + idleSlack,
		MaxIdleConnsPerHost: inFlight + idleSlack,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

// NoRedirects is an http.Client CheckRedirect that returns the 3xx answer
// itself instead of following it.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// HostPort is the host:port a URL's requests go to, the scheme's default
// port filled in (80 for http, 443 for https).
func HostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// acceptPoll is how often Accepting tries again while it waits.
const acceptPoll = 200 * time.Millisecond

// Accepting opens one connection to the host of base (an http or https
// URL), sending nothing over it, and closes it; it tries again every
// acceptPoll until wait has passed, for a service that is starting. The
// error is the last dial's. dial nil is the system's dialer.
func Accepting(ctx context.Context, dial Dialer, base string, wait time.Duration) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	addr := HostPort(u)
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	deadline := time.Now().Add(wait)
	for {
		c, err := dial(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(acceptPoll):
		}
	}
}
