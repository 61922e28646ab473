package loadgen

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/loadlab/loadlab/mockservice/api"
)

// fastHTTP is the client on github.com/valyala/fasthttp: each sender gets
// a host client of its own with one connection, so the time the
// connection last wrote is its request's write time; each sender's request
// (its URI parsed once) and response are its own and reused, only the id
// and the body changing, so nothing is allocated per request. A run's end or
// interruption is noticed at the request's deadline.
type fastHTTP struct {
	addr  string
	tls   bool
	uri   string
	clock Clock
	// dials bounds the connections being opened at once (see maxDials).
	dials chan struct{}

	mu    sync.Mutex
	conns []*fastConn
}

var _ client = (*fastHTTP)(nil)

func newFastHTTP(target *url.URL, clock Clock) *fastHTTP {
	return &fastHTTP{addr: hostPort(target), tls: target.Scheme == "https", uri: target.String(), clock: clock,
		dials: make(chan struct{}, maxDials)}
}

// maxDials bounds the connections the generator opens at once. A burst of
// new senders (after a pause of the process, say) would otherwise send a
// burst of SYNs that overflows the target's listen backlog, and each SYN
// dropped there is sent again only after a second: measured at 10 000
// requests/s against nginx, its ListenOverflows counter rose by hundreds
// and the run's p99 by half a second.
const maxDials = 32

// hostPort is the target's host and port, the scheme's port when it has
// none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Hostname() + ":443"
	}
	return u.Hostname() + ":80"
}

func (f *fastHTTP) newConn() conn {
	c := &fastConn{uri: f.uri, clock: f.clock}
	c.open = func() (net.Conn, error) {
		f.dials <- struct{}{}
		defer func() { <-f.dials }()
		return (&net.Dialer{Timeout: 10 * time.Second}).Dial("tcp", f.addr)
	}
	c.hc = &fasthttp.HostClient{
		Addr: f.addr, IsTLS: f.tls, MaxConns: 1,
		MaxIdleConnDuration: 90 * time.Second, NoDefaultUserAgentHeader: true,
		DisableHeaderNamesNormalizing: true, DisablePathNormalizing: true,
		Dial: func(string) (net.Conn, error) {
			nc, err := c.dialled, c.dialErr
			c.dialled, c.dialErr = nil, nil
			if nc == nil && err == nil {
				nc, err = c.open()
			}
			if err != nil {
				return nil, err
			}
			c.wire = &timedConn{Conn: newRawWire(nc), clock: f.clock}
			return c.wire, nil
		},
	}
	f.mu.Lock()
	f.conns = append(f.conns, c)
	f.mu.Unlock()
	return c
}

func (f *fastHTTP) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.hc.CloseIdleConnections()
	}
}

// fastConn is one sender's host client and the connection it dialled.
// Its fields are the sender's own goroutine's.
type fastConn struct {
	hc    *fasthttp.HostClient
	wire  *timedConn // set by Dial
	uri   string
	clock Clock
	open  func() (net.Conn, error)
	// dialled (or dialErr) is what dial opened before the first request,
	// for the host client's first Dial to return.
	dialled net.Conn
	dialErr error
	// req and resp are reused by every request; body is req's body.
	req  *fasthttp.Request
	resp *fasthttp.Response
	body []byte
}

var _ dialer = (*fastConn)(nil)

// dial opens the connection before the first request; the first request
// returns the error, if any, as its own.
func (c *fastConn) dial() { c.dialled, c.dialErr = c.open() }

func (c *fastConn) do(ctx context.Context, deadline time.Time, id string) (int, time.Time, error) {
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if c.req == nil {
		c.req, c.resp = &fasthttp.Request{}, &fasthttp.Response{}
		c.req.SetRequestURI(c.uri)
		c.req.Header.SetMethod(fasthttp.MethodPost)
		c.req.Header.SetContentType("application/json")
	}
	req, resp := c.req, c.resp
	req.Header.Set(api.HeaderRequestID, id)
	c.body = appendBody(c.body[:0], id)
	req.SetBodyRaw(c.body)
	if c.wire != nil {
		c.wire.wrote = time.Time{}
	}
	err := c.hc.DoDeadline(req, resp, deadline)
	var wrote time.Time
	if c.wire != nil {
		wrote = c.wire.wrote
	}
	if err != nil {
		return 0, wrote, err
	}
	return resp.StatusCode(), wrote, nil
}

func (c *fastConn) gaveUp(err error) bool { return errors.Is(err, fasthttp.ErrTimeout) }

// timedConn notes when it last wrote: the moment a request went out.
// fasthttp uses a connection from one goroutine at a time, the sender's.
type timedConn struct {
	net.Conn
	clock Clock
	wrote time.Time
}

func (t *timedConn) Write(p []byte) (int, error) {
	n, err := t.Conn.Write(p)
	t.wrote = t.clock.Now()
	return n, err
}
