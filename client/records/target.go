package records

import (
	"context"
	"fmt"

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
