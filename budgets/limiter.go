package budgets

import (
	"context"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Pool is a fixed number of permits that one or more budgets draw from:
// together they never have more calls in flight than the pool holds, while
// each keeps its own rate limit, deadlines and metrics. A Budget whose
// Config has a Limit makes a pool of its own; give several Configs the same
// *Pool to share one (strategy C3: one pool for every call, a rate limit
// per dependency).
//
// Permits are handed out first come, first served. A Pool is safe for
// concurrent use. The zero Pool holds no permits and cannot be used: make
// one with NewPool.
type Pool struct {
	size int
	sem  *semaphore.Weighted
	held atomic.Int64
}

// NewPool returns a pool of permits permits. It panics if permits < 1: a
// pool that can never admit a call is a programming error, not a
// configuration to run (validate user input before, as Config.Validate
// does for Limit).
func NewPool(permits int) *Pool {
	if permits < 1 {
		panic(fmt.Sprintf("budgets: NewPool(%d): a pool needs at least 1 permit", permits))
	}
	return &Pool{size: permits, sem: semaphore.NewWeighted(int64(permits))}
}

// Size returns how many permits the pool holds.
func (p *Pool) Size() int { return p.size }

// InUse returns how many permits are held now, by every budget drawing
// from the pool; it is never more than Size.
func (p *Pool) InUse() int { return int(p.held.Load()) }

// acquire takes one permit, blocking until one is free or ctx is done. On
// failure it returns ctx.Err() and leaves the pool unchanged.
func (p *Pool) acquire(ctx context.Context) error {
	if err := p.sem.Acquire(ctx, 1); err != nil {
		return err
	}
	p.held.Add(1)
	return nil
}

// release returns one permit. It panics if the pool has none out: a permit
// released twice would let one call too many in flight.
func (p *Pool) release() {
	if p.held.Add(-1) < 0 {
		panic("budgets: pool: released more permits than held")
	}
	p.sem.Release(1)
}
