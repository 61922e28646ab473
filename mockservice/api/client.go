package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// defaultHTTP is the client of a Client without one: it follows no
// redirect, so a call asks the target for its own path and nothing else.
var defaultHTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// DefaultTimeout bounds every call of a Client whose Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxAnswerBytes bounds what a Client reads of an answer (a request log of
// 100 000 entries is about 20 MB).
const maxAnswerBytes = 256 << 20

// Client drives a running mock service's health, admin and metrics routes.
// Every call is bounded by Timeout (DefaultTimeout when zero), whatever the
// caller's context. The zero HTTP client means one that follows no
// redirect (give an HTTP client that does not either). A Client is a
// value: copy it freely.
type Client struct {
	BaseURL string
	// Token is the admin routes' bearer token, if the service has one.
	Token   string
	HTTP    *http.Client
	Timeout time.Duration
	// Dial is how Discover checks that the target accepts connections
	// (nil: the system's dialer); give the one HTTP's transport dials
	// with, when it has its own.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrNotMock: the target did not identify itself as a loadlab mock service.
var ErrNotMock = errors.New("not a loadlab mock service")

// Identity is what a loadlab mock service says of itself.
type Identity struct {
	// Version is the service's build ("loadlab-mock/<version>" less the
	// name).
	Version   string
	TimeScale float64
}

// Identify asks the target, with OPTIONS on path (a load route, so that a
// foreign target is asked nothing beyond the path it is loaded on), whether
// it is a loadlab mock service. It returns ErrNotMock (wrapped, with what
// the target said) when it is not, and a transport error when it did not
// answer.
func (c Client) Identify(ctx context.Context, path string) (Identity, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	resp, err := c.send(ctx, http.MethodOptions, path, nil)
	if err != nil {
		return Identity{}, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	name, version, _ := strings.Cut(resp.Header.Get(HeaderMock), "/")
	if name != ServiceName {
		return Identity{}, fmt.Errorf("%w (OPTIONS %s answered %s without %s)", ErrNotMock, path, resp.Status, HeaderMock)
	}
	scale, err := strconv.ParseFloat(resp.Header.Get(HeaderTimeScale), 64)
	if err != nil || CheckTimeScale(scale) != nil {
		return Identity{}, fmt.Errorf("%w: %s %q is not a time scale", ErrNotMock, HeaderTimeScale, resp.Header.Get(HeaderTimeScale))
	}
	return Identity{Version: version, TimeScale: scale}, nil
}

// ErrUnreachable: the target did not accept a connection, or accepted one
// and did not answer HTTP in time.
var ErrUnreachable = errors.New("target unreachable")

// DiscoverTimeout bounds each step of Discover.
const DiscoverTimeout = 5 * time.Second

// Discover checks that the target accepts connections, then asks it, with
// OPTIONS on path (a load route), whether it is a loadlab mock service. It
// returns the mock's identity; nil and no error for any other target, which
// was asked nothing else; ErrUnreachable (wrapped, saying why) when it did
// not accept a connection or did not answer within DiscoverTimeout. The
// client's own Timeout does not apply.
func (c Client) Discover(ctx context.Context, path string) (*Identity, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not a URL", ErrUnreachable, c.BaseURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, DiscoverTimeout)
	conn, err := dial(dctx, "tcp", host)
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err() // interrupted: not the target's fault
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	conn.Close()
	c.Timeout = DiscoverTimeout
	id, err := c.Identify(ctx, path)
	switch {
	case err == nil:
		return &id, nil
	case errors.Is(err, ErrNotMock):
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err() // interrupted: not the target's fault
	default:
		return nil, fmt.Errorf("%w: it accepted a connection but did not answer HTTP within %v: %w", ErrUnreachable, DiscoverTimeout, err)
	}
}

// discoverPoll is how often DiscoverWait asks again.
const discoverPoll = 200 * time.Millisecond

// DiscoverWait is Discover, asked again every 200 ms while the target does
// not accept connections or answer, until wait has passed (0: ask once): for
// a mock service that is still starting.
func (c Client) DiscoverWait(ctx context.Context, path string, wait time.Duration) (*Identity, error) {
	deadline := time.Now().Add(wait)
	for {
		id, err := c.Discover(ctx, path)
		if err == nil || !errors.Is(err, ErrUnreachable) || !time.Now().Before(deadline) {
			return id, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(discoverPoll):
		}
	}
}

// Healthy reports whether GET /healthz answers 200.
func (c Client) Healthy(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, PathHealthz, nil, nil)
}

// Answers reports whether the target answers GET /healthz with any HTTP
// status at all: whether something speaks HTTP there.
func (c Client) Answers(ctx context.Context) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	resp, err := c.send(ctx, http.MethodGet, PathHealthz, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Reset clears the service's counters, high-water marks, request log and
// stored writes.
func (c Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, PathAdminReset, nil, nil)
}

// ResetSeed is Reset that also re-seeds the stations: the enrichment
// station with seed, the system of record with RecordsSeed(seed).
func (c Client) ResetSeed(ctx context.Context, seed uint32) error {
	return c.do(ctx, http.MethodPost, PathAdminReset, ResetRequest{Seed: &seed}, nil)
}

// Record asks the system of record whether it stored a write of id since
// the last reset: the record and true, or false when it answers 404.
func (c Client) Record(ctx context.Context, id string) (StoredRecord, bool, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	resp, err := c.send(ctx, http.MethodGet, PathRecords+"/"+url.PathEscape(id), nil)
	if err != nil {
		return StoredRecord{}, false, err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxAnswerBytes)
	switch resp.StatusCode {
	case http.StatusOK:
		var rec StoredRecord
		if err := json.NewDecoder(body).Decode(&rec); err != nil {
			return StoredRecord{}, false, fmt.Errorf("mock %s: decode: %w", PathRecords, err)
		}
		return rec, true, nil
	case http.StatusNotFound:
		return StoredRecord{}, false, nil
	}
	msg, _ := io.ReadAll(io.LimitReader(body, 4096))
	return StoredRecord{}, false, fmt.Errorf("mock %s/%s: %s: %s", PathRecords, id, resp.Status, strings.TrimSpace(string(msg)))
}

// SetProfile switches the service's latency profile.
func (c Client) SetProfile(ctx context.Context, profile string) error {
	return c.do(ctx, http.MethodPut, PathAdminProfile, ProfileRequest{Profile: profile}, nil)
}

// PatchConfig changes the service's live settings with PATCH
// /admin/config: patch is any subset of each station's workers, queue,
// reject_status and service (marshalled as JSON).
func (c Client) PatchConfig(ctx context.Context, patch any) error {
	return c.do(ctx, http.MethodPatch, PathAdminConfig, patch, nil)
}

// Stats reads GET /admin/stats.
func (c Client) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.do(ctx, http.MethodGet, PathAdminStats, nil, &st)
	return st, err
}

// RequestLog reads GET /admin/requests.
func (c Client) RequestLog(ctx context.Context) (RequestLogSnapshot, error) {
	var snap RequestLogSnapshot
	err := c.do(ctx, http.MethodGet, PathAdminRequests, nil, &snap)
	return snap, err
}

// Scrape reads /metrics and rebuilds Stats from them, the way a Prometheus
// server would see the service. It needs no admin token, and fails on a
// target that does not export the mock service's metrics.
func (c Client) Scrape(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.call(ctx, http.MethodGet, PathMetrics, nil, func(body io.Reader) error {
		var err error
		st, err = ParseMetrics(body)
		return err
	})
	return st, err
}

func (c Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.call(ctx, method, path, in, func(body io.Reader) error {
		if out == nil {
			return nil
		}
		if err := json.NewDecoder(body).Decode(out); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		return nil
	})
}

// call makes one bounded request and hands a 200 answer's body to read.
func (c Client) call(ctx context.Context, method, path string, in any, read func(io.Reader) error) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	limited := io.LimitReader(resp.Body, maxAnswerBytes)
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(limited, 4096))
		return fmt.Errorf("mock %s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := read(limited); err != nil {
		return fmt.Errorf("mock %s: %w", path, err)
	}
	return nil
}

// bound applies the client's timeout to ctx.
func (c Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// send makes one request with the token and JSON body, if any.
func (c Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("mock %s: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return nil, fmt.Errorf("mock %s: %w", path, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", BearerPrefix+c.Token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mock %s: %w", path, err)
	}
	return resp, nil
}
