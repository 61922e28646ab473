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
	enrich, _ := budgets.New("enrichment", budgets.Config{Limit: 24, PermitTimeout: time.Second, CallTimeout: 2 * time.Second}, m)
	writes, _ := budgets.New("records", budgets.Config{Limit: 6, PermitTimeout: time.Second, CallTimeout: 2 * time.Second}, m)

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
	enrich, _ := budgets.New("enrichment", budgets.Config{Pool: pool, Rate: 200, Burst: 1,
		PermitTimeout: 10 * time.Millisecond, CallTimeout: 2 * time.Second}, m)
	writes, _ := budgets.New("records", budgets.Config{Pool: pool, Rate: 1, Burst: 1,
		PermitTimeout: 10 * time.Millisecond, CallTimeout: 2 * time.Second}, m)

	ok := func(context.Context) (int, error) { return 200, nil }
	fmt.Println(enrich.Do(context.Background(), "enrichment", ok).Class)
	fmt.Println(writes.Do(context.Background(), "records", ok).Class)
	fmt.Println(writes.Do(context.Background(), "records", ok).Class) // the next token is 1 s away
	fmt.Println(pool.InUse(), "of", pool.Size(), "permits in use")
	// Output:
	// ok
	// ok
	// rate_timeout
	// 0 of 30 permits in use
}
