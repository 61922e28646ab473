// Package latency provides seeded, reproducible service-time distributions:
// fixed, uniform, log-normal, empirical (piecewise linear through measured
// quantiles), weighted mixtures of these, and a "hang" wrapper, all drawn
// from the Mulberry32 generator that the published concurrency simulation
// uses.
//
// The same distributions serve the mock service (real sleeps) and the
// deterministic models (simulated time), so a real run and its model can
// draw the very same sequence of durations from the same seed.
package latency

// Source is a stream of uniform numbers in [0, 1). Implementations need not
// be safe for concurrent use.
type Source interface {
	Float64() float64
}

// Mulberry32 is the 32-bit generator by Tommy Ettinger, bit-for-bit the
// JavaScript function commonly published as mulberry32(a): the same seed
// gives the same sequence as in Node.js. The zero value is seeded with 0.
// It is not safe for concurrent use.
type Mulberry32 struct {
	state uint32
}

// NewMulberry32 returns a generator seeded with seed.
func NewMulberry32(seed uint32) *Mulberry32 {
	return &Mulberry32{state: seed}
}

// Uint32 returns the next 32-bit output.
func (m *Mulberry32) Uint32() uint32 {
	m.state += 0x6D2B79F5
	a := m.state
	t := (a ^ a>>15) * (1 | a)
	t = (t + (t^t>>7)*(61|t)) ^ t
	return t ^ t>>14
}

// Float64 returns the next output divided by 2^32, in [0, 1), exactly as the
// JavaScript version does.
func (m *Mulberry32) Float64() float64 {
	return float64(m.Uint32()) / 4294967296
}

var _ Source = (*Mulberry32)(nil)
