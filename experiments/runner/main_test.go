package runner

import (
	"testing"

	"github.com/loadlab/loadlab/experiments/exptest"
)

// TestMain removes the loadlab binary the tests built, if they built one.
func TestMain(m *testing.M) { exptest.Main(m) }
