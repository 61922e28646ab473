//go:build linux && !race

package loadgen

// raceRead and raceWrite tell the race detector what a raw read or write
// did; without it, nothing.
func raceRead(uintptr, []byte)  {}
func raceWrite(uintptr, []byte) {}
