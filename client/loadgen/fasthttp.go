package loadgen

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/loadlab/loadlab/mockservice/api"
)

// fastHTTP is the doer on github.com/valyala/fasthttp: pooled requests and
// responses, no allocation per request. fasthttp has no hook for the
// moment a request is written; it writes at once on a free connection, so
// the send time is taken when the request is handed to it (a connection
// still being dialled is then counted as latency, not as send lag). A
// run's end or interruption is noticed at the request's deadline.
type fastHTTP struct {
	hc    *fasthttp.HostClient
	uri   string
	clock Clock
}

var _ doer = (*fastHTTP)(nil)

func newFastHTTP(target *url.URL, conns int, clock Clock) *fastHTTP {
	return &fastHTTP{clock: clock, uri: target.String(), hc: &fasthttp.HostClient{
		Addr: hostPort(target), IsTLS: target.Scheme == "https", MaxConns: conns,
		MaxIdleConnDuration: 90 * time.Second, NoDefaultUserAgentHeader: true,
		DisableHeaderNamesNormalizing: true, DisablePathNormalizing: true,
	}}
}

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

func (f *fastHTTP) do(ctx context.Context, deadline time.Time, id string, body []byte) (int, time.Time, error) {
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(f.uri)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set(api.HeaderRequestID, id)
	req.SetBodyRaw(body)
	sent := f.clock.Now()
	if err := f.hc.DoDeadline(req, resp, deadline); err != nil {
		return 0, sent, err
	}
	return resp.StatusCode(), sent, nil
}

func (f *fastHTTP) gaveUp(err error) bool { return errors.Is(err, fasthttp.ErrTimeout) }

func (f *fastHTTP) close() { f.hc.CloseIdleConnections() }
