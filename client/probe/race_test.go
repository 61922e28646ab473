//go:build race

package probe

// raceEnabled: the race detector adds 1–2 ms to each call of a client and
// a mock service in one process, several times the 0.6 ms of a plain build.
const raceEnabled = true
