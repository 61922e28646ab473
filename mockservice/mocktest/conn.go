package mocktest

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// pipe returns the two ends of an in-memory connection. Unlike net.Pipe,
// a write does not wait for the other end to read it: each direction is a
// buffer, as a socket's is, so that a client may write a request body
// that the server reads only later (net/http flushes a request's headers
// before its body and a handler need not read the body at all). Reads
// wait for data, the other end's close (io.EOF once drained), this end's
// close, or the read deadline (os.ErrDeadlineExceeded).
func pipe(a, b net.Addr) (net.Conn, net.Conn) {
	ab, ba := newHalf(), newHalf()
	return &memConn{in: ba, out: ab, local: a, remote: b}, &memConn{in: ab, out: ba, local: b, remote: a}
}

// half is one direction of a connection.
type half struct {
	mu       sync.Mutex
	buf      []byte
	eof      bool          // the writing end closed: EOF once drained
	gone     bool          // the reading end closed: writes fail
	changed  chan struct{} // a token when something above changed
	deadline time.Time     // the reading end's read deadline
}

func newHalf() *half { return &half{changed: make(chan struct{}, 1)} }

func (h *half) signal() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

func (h *half) read(p []byte) (int, error) {
	for {
		h.mu.Lock()
		switch {
		case h.gone:
			h.mu.Unlock()
			return 0, net.ErrClosed
		case len(h.buf) > 0:
			n := copy(p, h.buf)
			h.buf = h.buf[n:]
			h.mu.Unlock()
			return n, nil
		case h.eof:
			h.mu.Unlock()
			return 0, io.EOF
		}
		deadline := h.deadline
		h.mu.Unlock()
		if deadline.IsZero() {
			<-h.changed
			continue
		}
		d := time.Until(deadline)
		if d <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		t := time.NewTimer(d)
		select {
		case <-h.changed:
		case <-t.C:
		}
		t.Stop()
	}
}

func (h *half) write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.eof {
		return 0, net.ErrClosed
	}
	if h.gone {
		return 0, io.ErrClosedPipe
	}
	h.buf = append(h.buf, p...)
	h.signal()
	return len(p), nil
}

func (h *half) set(f func(*half)) {
	h.mu.Lock()
	f(h)
	h.mu.Unlock()
	h.signal()
}

// memConn is one end of a pipe.
type memConn struct {
	in, out       *half
	local, remote net.Addr
	wmu           sync.Mutex
	wdeadline     time.Time
}

func (c *memConn) Read(p []byte) (int, error) { return c.in.read(p) }

func (c *memConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	d := c.wdeadline
	c.wmu.Unlock()
	if !d.IsZero() && !time.Now().Before(d) {
		return 0, os.ErrDeadlineExceeded
	}
	return c.out.write(p)
}

// Close ends both directions: the other end reads EOF once it has read
// what was written, and its writes fail.
func (c *memConn) Close() error {
	c.out.set(func(h *half) { h.eof = true })
	c.in.set(func(h *half) { h.gone = true; h.buf = nil })
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.in.set(func(h *half) { h.deadline = t })
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	c.wdeadline = t
	c.wmu.Unlock()
	return nil
}
