package records_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Config.Stop drains: once closed no record begins, and every record
// begun ends in its own state with its calls answered — none interrupted,
// no write of unknown outcome; the others are not_started, and the result
// says it is partial. The server stored exactly the writes answered 201.
func TestStopDrains(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testStopDrains)
}

func testStopDrains(t *testing.T) {
	m := startMock(t, config.Default())
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if st, err := m.admin.Stats(context.Background()); err == nil && st.StoredWrites >= 10 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res := run(t, m, "C4", 5000, func(c *records.Config) { c.Stop = stop })
	begun := res.Records - res.NotStarted
	if !res.Partial || res.NotStarted == 0 || res.Interrupted != 0 || res.WriteUnknown != 0 || res.Failed != 0 ||
		res.Complete+res.Incomplete+res.WriteRejected != begun || begun < 10 {
		t.Errorf("drained: %+v", res)
	}
	if got := m.stats(t).StoredWrites; got != res.WritesCreated {
		t.Errorf("the server stored %d writes, the client saw %d answered 201", got, res.WritesCreated)
	}
}
