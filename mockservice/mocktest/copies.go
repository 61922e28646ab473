package mocktest

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/virtual"
)

// CopiesOptions say which virtual copies (mockservice/virtual) to start.
type CopiesOptions struct {
	// Config is the copies' settings; each copy's Listen is ignored.
	Config config.Copies
	// InMemory serves every copy on an in-memory Network (Network, else a
	// new one), each on a host of its own, as Options.InMemory does.
	InMemory bool
	Network  *Network
}

// Copies are running virtual copies.
type Copies struct {
	// URLs, Copies and Clients are each copy's base URL, the copy itself,
	// and a client of its health, admin and metrics routes, by name.
	URLs    map[string]string
	Copies  map[string]*virtual.Copy
	Clients map[string]api.Client
	// Stop shuts every copy down (cleanup calls it); safe to call again.
	Stop func() error
	// HTTP reaches them (over the Network, when in memory); Dial is the
	// Network's (nil on loopback), to give the client under test.
	HTTP *http.Client
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TimeScale is the copies' time scale, to give the client as well.
	TimeScale float64
}

// StartCopies serves o.Config's copies until tb ends, each on a loopback
// port of its own, or in memory.
func StartCopies(tb testing.TB, o CopiesOptions) *Copies {
	tb.Helper()
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	var nw *Network
	if o.InMemory || o.Network != nil {
		if nw = o.Network; nw == nil {
			nw = NewNetwork()
		}
		dial = nw.Dial
	}
	var lns []net.Listener
	for range o.Config.Copies {
		var ln net.Listener
		var err error
		if nw != nil {
			ln, err = nw.Listen(nw.freeHost())
		} else {
			ln, err = net.Listen("tcp", "127.0.0.1:0")
		}
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			tb.Fatal(err)
		}
		lns = append(lns, ln)
	}
	copies, urls, stop, err := virtual.StartOn(o.Config, lns)
	if err != nil {
		tb.Fatal(err)
	}
	hc := serveUntilEnd(tb, stop, dial)
	out := &Copies{URLs: urls, Copies: map[string]*virtual.Copy{}, Clients: map[string]api.Client{},
		Stop: stop, HTTP: hc, Dial: dial, TimeScale: o.Config.WithDefaults().TimeScale}
	for _, c := range copies {
		out.Copies[c.Name()] = c
		out.Clients[c.Name()] = api.Client{BaseURL: urls[c.Name()], Token: o.Config.AdminToken, HTTP: hc, Dial: dial}
	}
	return out
}
