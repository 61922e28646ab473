package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/client/transport"
)

// Accepting checks that every dependency with a base URL of its own
// accepts a connection (transport.Accepting: nothing is sent over it),
// waiting up to wait for one that is starting; the error names the first
// that does not. dial nil is the system's dialer.
func (p *Pipeline) Accepting(ctx context.Context, dial transport.Dialer, wait time.Duration) error {
	for _, d := range p.Dependencies {
		if d.BaseURL == "" {
			continue
		}
		if err := transport.Accepting(ctx, dial, d.BaseURL, wait); err != nil {
			return fmt.Errorf("dependency %s at %s accepts no connection: %v", d.Name, d.BaseURL, err)
		}
	}
	return nil
}
