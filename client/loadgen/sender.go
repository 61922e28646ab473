package loadgen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
)

// client is one of the generator's HTTP clients: it gives each sender
// goroutine (an open generator's sender, a closed user) a conn of its own.
type client interface {
	newConn() conn
	close()
}

// conn makes one request at a time for one sender: POST the load body for
// the request id (see appendBody), carrying the id, to the target until
// deadline. It returns the HTTP status (0 when no answer came), when the
// request had been written to the connection (zero when it never was),
// and the error.
type conn interface {
	do(ctx context.Context, deadline time.Time, id string) (status int, wrote time.Time, err error)
	// gaveUp reports whether err means the deadline passed first.
	gaveUp(err error) bool
}

// netHTTP is the client on net/http: the request built once and copied,
// the connections pooled and shared by the senders, the write time from
// httptrace.
type netHTTP struct {
	client *http.Client
	tmpl   *http.Request
	clock  Clock
}

var (
	_ client = (*netHTTP)(nil)
	_ conn   = (*netHTTP)(nil)
)

// newConn is the client itself: net/http pools its connections.
func (n *netHTTP) newConn() conn { return n }

func newNetHTTP(target *url.URL, conns int, clock Clock, dial transport.Dialer) *netHTTP {
	return &netHTTP{client: transport.NewDial(conns, dial), clock: clock, tmpl: &http.Request{
		Method: http.MethodPost, URL: target, Host: target.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}}
}

var contentTypeJSON = []string{"application/json"}

func (n *netHTTP) do(ctx context.Context, deadline time.Time, id string) (int, time.Time, error) {
	body := appendBody(nil, id)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var wrote atomic.Int64 // unix nanoseconds, by the clock
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(n.clock.Now().UnixNano()) },
	})
	req := n.tmpl.WithContext(ctx) // a copy; the URL is shared and never changed
	req.Header = http.Header{"Content-Type": contentTypeJSON, api.HeaderRequestID: {id}}
	req.Body, req.ContentLength = &bodyReader{b: body}, int64(len(body))
	status := 0
	resp, err := n.client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}
	var at time.Time
	if ns := wrote.Load(); ns != 0 {
		at = time.Unix(0, ns)
	}
	return status, at, err
}

func (n *netHTTP) gaveUp(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

func (n *netHTTP) close() { n.client.CloseIdleConnections() }

// bodyReader is a request body over a byte slice: one allocation, no copy.
type bodyReader struct {
	b []byte
	i int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

// appendBody appends to b what every load request carries, valid for both
// stations: {"record_id":ID,"step":1,"id":ID,"complete":true}. Ids are the
// generator's own ("load-" and digits), so they need no escaping.
func appendBody(b []byte, id string) []byte {
	b = append(b, `{"record_id":"`...)
	b = append(b, id...)
	b = append(b, `","step":1,"id":"`...)
	b = append(b, id...)
	return append(b, `","complete":true}`...)
}

// runEnded reports whether the run is over: its context done, or its
// deadline reached. A client that cuts a request at the run's deadline
// (fasthttp does, on its own timer) can return before the context's timer
// has marked it done; such a request was pending, not given up on.
func runEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// send makes one request on c and records what the client saw of it. The
// send lag (late start) is taken when the request has been written.
func (g *generator) send(runCtx context.Context, c conn, req *request) (Reply, time.Time) {
	status, wrote, err := c.do(runCtx, req.deadline, req.id)
	now := g.clock.Now()
	reply := ReplyTransport
	switch {
	case err != nil && runEnded(runCtx) && now.Before(req.deadline):
		reply = ReplyPending // the run ended first
	case err != nil && c.gaveUp(err):
		reply = ReplyGaveUp
	case err != nil:
	case api.Rejected(status):
		reply = ReplyRejected
	case status >= 200 && status < 300:
		reply = ReplyOnTime
	default:
		reply = ReplyStatus
	}
	g.settle(req, reply, status, wrote, now)
	return reply, now
}
