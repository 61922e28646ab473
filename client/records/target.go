package records

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// prepare checks the mock service against the run and readies it: the time
// scale must match; then the profile switch and the reset, when asked for.
func prepare(ctx context.Context, cfg Config, identity *api.Identity) error {
	if identity == nil {
		if cfg.Profile != "" {
			return fmt.Errorf("%w (%s): cannot switch it to profile %q", ErrNotMock, cfg.Target, cfg.Profile)
		}
		return nil
	}
	if identity.TimeScale != cfg.TimeScale {
		return fmt.Errorf("%w: the mock service at %s runs at time scale %g, this run at %g",
			ErrTimeScaleMismatch, cfg.Target, identity.TimeScale, cfg.TimeScale)
	}
	admin := api.Client{BaseURL: cfg.Target, Token: cfg.AdminToken}
	if cfg.Profile != "" {
		if err := admin.SetProfile(ctx, cfg.Profile); err != nil {
			return fmt.Errorf("%w: %v", ErrAdmin, err)
		}
	}
	if cfg.Reset {
		if err := admin.Reset(ctx); err != nil {
			return fmt.Errorf("%w: %v (give --admin-token, or --reset=false)", ErrAdmin, err)
		}
	}
	return nil
}

// identifyTimeout bounds the checks before the first record.
const identifyTimeout = 5 * time.Second

// identify checks that the target accepts connections, then asks it, on the
// enrichment route, whether it is a loadlab mock service: nil when it is
// not.
func identify(ctx context.Context, mock api.Client) (*api.Identity, error) {
	u, err := url.Parse(mock.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not a URL", ErrUnreachable, mock.BaseURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	d := net.Dialer{Timeout: identifyTimeout}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	conn.Close()
	mock.Timeout = identifyTimeout
	id, err := mock.Identify(ctx, api.PathEnrich)
	switch {
	case err == nil:
		return &id, nil
	case errors.Is(err, api.ErrNotMock):
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: it accepted a connection but did not answer HTTP within %v: %v", ErrUnreachable, identifyTimeout, err)
	}
}
