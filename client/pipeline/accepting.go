package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/transport"
)

// Accepting checks that every dependency sent its calls elsewhere than
// target (bases: where each is sent, by name — its own base URL, or one a
// run gives it) accepts a connection (transport.Accepting: nothing is
// sent over it), waiting up to wait for one that is starting; the error
// names the first that does not. dial nil is the system's dialer. The
// target is the caller's to check.
func (p *Pipeline) Accepting(ctx context.Context, dial transport.Dialer, wait time.Duration, bases map[string]string, target string) error {
	var checked []string
	for _, d := range p.Dependencies {
		base := bases[d.Name]
		if base == "" || base == target || slices.Contains(checked, base) {
			continue
		}
		if err := transport.Accepting(ctx, dial, base, wait); err != nil {
			return fmt.Errorf("dependency %s at %s accepts no connection: %v", d.Name, base, err)
		}
		checked = append(checked, base)
	}
	return nil
}
