package budgets_test

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/budgets"
)

// Per-dependency budgets: the system of record gets six permits of its own,
// whatever the enrichment API is doing.
func Example() {
	m := budgets.NewMetrics(nil)
	enrich, _ := budgets.New("enrichment", budgets.Config{Limiter: budgets.Fixed(24), PermitTimeout: time.Second, CallTimeout: 2 * time.Second}, m)
	writes, _ := budgets.New("records", budgets.Config{Limiter: budgets.Fixed(6), PermitTimeout: time.Second, CallTimeout: 2 * time.Second}, m)

	ok := func(context.Context) (int, error) { return 200, nil }
	full := func(context.Context) (int, error) { return 503, nil }
	fmt.Println(enrich.Do(context.Background(), "enrichment", ok).Class)
	fmt.Println(writes.Do(context.Background(), "records", full).Class)
	// Output:
	// ok
	// rejected
}

// Strategy C3 with rate limits: one pool of 30 permits for every call, and
// each dependency held to a rate of its own. A writer that can have no token
// within the permit timeout waits it out and ends rate_timeout, holding no
// permit meanwhile.
func ExamplePool() {
	m := budgets.NewMetrics(nil)
	pool := budgets.NewPool(30)
	enrich, _ := budgets.New("enrichment", budgets.Config{Limiter: pool, Rate: 200, Burst: 1,
		PermitTimeout: 10 * time.Millisecond, CallTimeout: 2 * time.Second}, m)
	writes, _ := budgets.New("records", budgets.Config{Limiter: pool, Rate: 1, Burst: 1,
		PermitTimeout: 10 * time.Millisecond, CallTimeout: 2 * time.Second}, m)

	ok := func(context.Context) (int, error) { return 200, nil }
	fmt.Println(enrich.Do(context.Background(), "enrichment", ok).Class)
	fmt.Println(writes.Do(context.Background(), "records", ok).Class)
	fmt.Println(writes.Do(context.Background(), "records", ok).Class) // the next token is 1 s away
	fmt.Println(pool.InUse(), "of", pool.Limit(), "permits in use")
	// Output:
	// ok
	// ok
	// rate_timeout
	// 0 of 30 permits in use
}

// Strategy C5: an adaptive limit for writes that AIMD moves after every
// call, and a budget that judges answers by the dependency's own statuses.
// A rejection (409 here) is a drop: the limit falls from 6 to ⌊6 × 0.9⌋.
func ExampleAdaptive() {
	m := budgets.NewMetrics(nil)
	limit, err := budgets.NewAdaptive(budgets.AIMD{Initial: 6, Floor: 1, Ceiling: 12, Backoff: budgets.DefaultAIMDBackoff})
	if err != nil {
		panic(err)
	}
	writes, _ := budgets.New("records", budgets.Config{Limiter: limit, PermitTimeout: time.Second, CallTimeout: 2 * time.Second,
		Success: []int{200, 201}, Rejection: []int{409}}, m)

	conflict := func(context.Context) (int, error) { return 409, nil }
	fmt.Println(writes.Do(context.Background(), "records", conflict).Class, limit.Limit())
	// Output:
	// rejected 5
}
