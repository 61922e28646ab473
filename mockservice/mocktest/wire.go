package mocktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Network is an in-memory network of named hosts: a server listens on a
// host:port with Listen, and Dial connects to it through an in-memory
// connection with deadlines, buffered as a socket is. Real net/http
// servers and clients speak over it unchanged; only the wire is swapped. Inside a
// testing/synctest bubble nothing on it waits on the operating system, so
// the bubble's fake clock advances whenever every goroutine waits (on a
// timer, a permit, or the other end of a connection), and a test of
// ordering, counts or deadlines takes the time the CPU needs, not the time
// it describes. Create it inside the bubble that uses it.
type Network struct {
	mu    sync.Mutex
	hosts map[string]*listener
}

// NewNetwork returns a network with no host listening.
func NewNetwork() *Network { return &Network{hosts: map[string]*listener{}} }

// ErrClosed is what Accept returns once its listener is closed.
var ErrClosed = errors.New("mocktest: in-memory listener closed")

// freeHost is a host:port no one listens on: mock1.memory:80, mock2…
func (n *Network) freeHost() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := 1; ; k++ {
		if h := fmt.Sprintf("mock%d.memory:80", k); n.hosts[h] == nil {
			return h
		}
	}
}

// Listen listens on addr (host:port, any names), which must be free.
func (n *Network) Listen(addr string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.hosts[addr]; ok {
		return nil, fmt.Errorf("mocktest: listen %s: address already in use", addr)
	}
	l := &listener{net: n, addr: memAddr(addr), conns: make(chan net.Conn), done: make(chan struct{})}
	n.hosts[addr] = l
	return l, nil
}

// Dial connects to the listener at addr (the signature of
// net.Dialer.DialContext and http.Transport.DialContext). An address no
// one listens on is refused as a closed port is (syscall.ECONNREFUSED).
func (n *Network) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.hosts[addr]
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: network, Addr: memAddr(addr), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if l == nil {
		return nil, refused
	}
	client, server := pipe(memAddr("client.memory:1"), memAddr(addr))
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if ctx.Err() != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: memAddr(addr), Err: ctx.Err()}
	}
	return nil, refused
}

// listener is one host's net.Listener.
type listener struct {
	net   *Network
	addr  memAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	}
}

// Close frees the address; connections already made stay open until their
// ends close them.
func (l *listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		delete(l.net.hosts, string(l.addr))
		l.net.mu.Unlock()
	})
	return nil
}

func (l *listener) Addr() net.Addr { return l.addr }

// memAddr is an address on a Network.
type memAddr string

func (memAddr) Network() string  { return "memory" }
func (a memAddr) String() string { return string(a) }

// Serve serves any handler h (a service of the test's own) on a new
// Network until tb ends, and returns its URL and the Network's Dial to
// give the client under test. Call it inside the synctest bubble that
// uses it.
func Serve(tb testing.TB, h http.Handler) (string, func(ctx context.Context, network, addr string) (net.Conn, error)) {
	tb.Helper()
	nw := NewNetwork()
	ln, err := nw.Listen(nw.freeHost())
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() {
		_ = srv.Close()
		time.Sleep(time.Hour) // on the fake clock: handlers still running end inside the bubble
	})
	return "http://" + ln.Addr().String(), nw.Dial
}
