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
