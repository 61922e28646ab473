//go:build linux && race

package loadgen

import (
	"runtime"
	"syscall"
	"unsafe"
)

// raceRead tells the race detector what a raw read did, as syscall.Read
// does: the kernel wrote p, and what the other end wrote before it sent
// the data happens before. The second is syscall's to say (a read of no
// bytes on fd), since the net package's writes release syscall's own
// variable.
func raceRead(fd uintptr, p []byte) {
	if len(p) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(&p[0]), len(p))
	}
	_, _ = syscall.Read(int(fd), nil)
}

// raceWrite tells the race detector what a raw write will do, as
// syscall.Write does: the kernel reads p, and what this goroutine did
// before happens before the other end reads the data (a write of no
// bytes on fd releases syscall's variable).
func raceWrite(fd uintptr, p []byte) {
	_, _ = syscall.Write(int(fd), nil)
	if len(p) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(&p[0]), len(p))
	}
}
