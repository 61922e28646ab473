package loadgen

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawWire is a TCP connection whose reads and writes enter the kernel
// without telling the Go scheduler that they might block (syscall.RawSyscall
// instead of syscall.Syscall). They cannot: the socket is non-blocking,
// and a read or write that would wait returns EAGAIN, after which the
// goroutine waits on the runtime's network poller as net.Conn's own would
// (syscall.RawConn), deadlines included. A call marked as possibly
// blocking lets the scheduler hand the core's processor to another
// thread, and on one core each hand-off is thread switches that send
// nothing: with both made so, the open generator's CPU a request at
// 10,000/s fell by about a third, where either alone did little or
// nothing (see deploy/README.md, BenchmarkOpen).
type rawWire struct {
	*net.TCPConn
	rc syscall.RawConn
}

// newRawWire wraps c when it is a TCP connection; otherwise it is c.
func newRawWire(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawWire{TCPConn: tc, rc: rc}
}

func (w *rawWire) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := w.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			case 0:
				raceRead(fd, p[:r])
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, w.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (w *rawWire) Write(p []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := w.rc.Write(func(fd uintptr) bool {
		if written == 0 { // not again after waiting for room
			raceWrite(fd, p)
		}
		for written < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[written])), uintptr(len(p)-written))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = w.opError("write", errno)
	}
	return written, err
}

// opError is errno as net.Conn's own reads and writes report it.
func (w *rawWire) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: w.LocalAddr(), Addr: w.RemoteAddr(), Err: errno}
}
