package replay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/loadlab/loadlab/client/transport"
)

// predial opens k connections to the target before the clock starts and
// hands them to hc's transport as it asks for new ones: the model issues
// requests at once, and dialling one connection per request issued at
// once would delay their admission, not the workload's.
func predial(ctx context.Context, hc *http.Client, target string, k int, dial transport.Dialer) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("replay: target %q: %w", target, err)
	}
	addr := transport.HostPort(u)
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	pool := make(chan net.Conn, k)
	for range k {
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			close(pool)
			for c := range pool {
				c.Close()
			}
			return fmt.Errorf("replay: connect to %s: %w", addr, err)
		}
		pool <- c
	}
	tr := hc.Transport.(*http.Transport)
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if a == addr {
			select {
			case c := <-pool:
				return c, nil
			default:
			}
		}
		return dial(ctx, network, a)
	}
	return nil
}
