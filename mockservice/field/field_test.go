package field_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/loadlab/loadlab/mockservice/field"
)

func TestWithinAndRename(t *testing.T) {
	base := errors.New("must be ≥ 1")
	names := field.Names{"records": "--records", "strategy": "--strategy-file", "strategy.permits": "--permits"}
	for _, tc := range []struct {
		err        error
		field      string
		text, flag string
	}{
		{field.Errorf("records", "%d must be ≥ 1", 0), "records", "records: 0 must be ≥ 1", "--records: 0 must be ≥ 1"},
		{field.Within("strategy", field.Within("permits", field.Errorf("geo", "%w", base))), "strategy.permits.geo",
			"strategy.permits.geo: must be ≥ 1", "--permits: geo: must be ≥ 1"},
		{field.Within("strategy", base), "strategy", "strategy: must be ≥ 1", "--strategy-file: must be ≥ 1"},
		{fmt.Errorf("records: %w", field.Errorf("time_scale", "%v is not > 0", 0)), "time_scale",
			"records: time_scale: 0 is not > 0", "--time-scale?"},
	} {
		fe, ok := field.Of(tc.err)
		if !ok || fe.Field != tc.field || tc.err.Error() != tc.text {
			t.Errorf("%v: field %v %v, want %q and %q", tc.err, fe, ok, tc.field, tc.text)
		}
		got := names.Rename(tc.err)
		want := tc.flag
		if want == "--time-scale?" { // not in the map: unchanged
			want = tc.text
		}
		if got.Error() != want {
			t.Errorf("renamed %q, want %q", got, want)
		}
		if !errors.Is(got, base) && tc.err != nil && errors.Is(tc.err, base) {
			t.Errorf("renamed %q lost its cause", got)
		}
	}
	if field.Within("x", nil) != nil {
		t.Error("Within(nil) is not nil")
	}
	if _, ok := field.Of(base); ok {
		t.Error("a plain error has a field")
	}
}
