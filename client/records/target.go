package records

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/api"
)

// prepare checks the mock service against the run and readies it: the time
// scale must match; then the profile switch and the reset, when asked for.
func prepare(ctx context.Context, cfg Config, identity *api.Identity, hc *http.Client) error {
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
	admin := api.Client{BaseURL: cfg.Target, Token: cfg.AdminToken, HTTP: hc}
	if cfg.Profile != "" {
		if err := admin.SetProfile(ctx, cfg.Profile); err != nil {
			return fmt.Errorf("%w: %w", ErrAdmin, err)
		}
	}
	if cfg.Reset {
		if err := admin.Reset(ctx); err != nil {
			return fmt.Errorf("%w: %w", ErrReset, err)
		}
	}
	return nil
}

// identify asks the run's target, with OPTIONS on the path of the first
// dependency the pipeline calls at the target (the lab's: /enrich), whether
// it is a loadlab mock service, waiting up to cfg.Wait for it to accept
// connections. Dependencies with a base URL of their own are never asked
// anything but their calls. A pipeline that calls nothing at the target
// has no identity (nil) and nothing is asked.
func identify(ctx context.Context, cfg Config, p *pipeline.Pipeline, hc *http.Client) (*api.Identity, error) {
	for _, d := range p.Dependencies {
		if d.BaseURL != "" {
			continue
		}
		path, _, err := d.Render(pipeline.Data{ID: cfg.RunID + "identify", Step: 1, Complete: true})
		if err != nil {
			return nil, err
		}
		path, _, _ = strings.Cut(path, "?")
		return (api.Client{BaseURL: cfg.Target, HTTP: hc, Dial: cfg.Dial}).DiscoverWait(ctx, path, cfg.Wait)
	}
	return nil, nil
}
