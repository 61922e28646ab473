//go:build linux

package loadgen

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair is a connected pair of loopback TCP connections: the first
// wrapped as the generator wraps its own.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	w := newRawWire(c)
	if _, ok := w.(*rawWire); !ok {
		t.Fatalf("a TCP connection is not wrapped: %T", w)
	}
	t.Cleanup(func() { w.Close(); peer.Close() })
	return w, peer
}

// A write larger than the socket's buffers waits on the poller when the
// kernel takes no more (EAGAIN) and goes on where it stopped: every byte
// arrives, in order.
func TestRawWireWritesAllOfALargeBuffer(t *testing.T) {
	w, peer := tcpPair(t)
	want := make([]byte, 16<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	n, err := w.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	w.(*rawWire).CloseWrite()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(want))
	}
}

// Reads return what the peer wrote, then io.EOF when it closes.
func TestRawWireReadsThenEOF(t *testing.T) {
	w, peer := tcpPair(t)
	go func() {
		peer.Write([]byte("HTTP/1.1 200 OK\r\n"))
		peer.Close()
	}()
	b, err := io.ReadAll(w)
	if err != nil || string(b) != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	if n, err := w.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want 0, EOF", n, err)
	}
}

// A read waiting past the connection's deadline returns a timeout, as
// net.Conn's does (fasthttp reports it as ErrTimeout, the generator as
// gave up).
func TestRawWireReadHonoursTheDeadline(t *testing.T) {
	w, _ := tcpPair(t)
	w.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := w.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline = %v; want a timeout", err)
	}
}

// A write to a connection the peer has reset reports the kernel's error.
func TestRawWireWriteReportsTheKernelsError(t *testing.T) {
	w, peer := tcpPair(t)
	peer.(*net.TCPConn).SetLinger(0) // close with a reset
	peer.Close()
	var err error
	for range 100 { // the first write may still be taken, the reset comes back on it
		if _, err = w.Write([]byte("x")); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" {
		t.Fatalf("Write after a reset = %v; want the kernel's error as a *net.OpError", err)
	}
}

// A connection that is not TCP is used as it is.
func TestRawWireLeavesOtherConnectionsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := newRawWire(a); c != a {
		t.Fatalf("net.Pipe wrapped as %T", c)
	}
}
