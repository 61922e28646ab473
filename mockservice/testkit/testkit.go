// Package testkit holds the small helpers that the tests of several
// packages share: values shown whole in a failure's message. It imports
// nothing of ours, so that any package's tests may use it.
package testkit

import (
	"encoding/json"
	"testing"
)

// JSON is v as JSON, for comparing results whole; a value that cannot be
// marshalled fails the test.
func JSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Value is what p points to, or nil: an optional count shown in a
// message as its number or <nil>.
func Value[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
