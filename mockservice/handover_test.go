package mockservice_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// Real time, since timer slack is the subject: a worker's timer fires a
// little after its service was planned to end, and a request that arrives
// in that slack finds the worker busy and waits. Handed the worker, it
// starts at the later of the predecessor's planned end and its own
// arrival, never before it arrived. Over a saturated one-worker station's
// request log, every served request started at or after its arrival.
func TestWaiterNeverStartsBeforeItArrived(t *testing.T) {
	url, svc := startService(t, oneWorker(time.Millisecond, false))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	const senders = 4
	deadline := time.Now().Add(500 * time.Millisecond)
	var wg sync.WaitGroup
	for c := range senders {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				id := fmt.Sprintf("h%d-%d", c, i)
				req, _ := http.NewRequest(http.MethodPost, url+api.PathRecords, strings.NewReader(writeBody(id)))
				req.Header.Set(api.HeaderRequestID, id)
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				// Arrivals spread over the worker's cycle, so some land
				// in a timer's slack.
				time.Sleep(time.Duration(rand.Int64N(int64(3 * time.Millisecond))))
			}
		})
	}
	wg.Wait()
	snap, err := api.Client{BaseURL: url}.RequestLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var served, waited, early int
	for _, e := range snap.Entries {
		if e.Started == nil {
			continue
		}
		served++
		switch {
		case e.Started.Before(e.Arrived):
			if early < 5 {
				t.Errorf("%s started %v before it arrived", e.ID, e.Arrived.Sub(*e.Started))
			}
			early++
		case e.Started.After(e.Arrived):
			waited++
		}
	}
	if early > 0 {
		t.Errorf("%d of %d served requests started before they arrived", early, served)
	}
	// The station was saturated: many requests waited for the worker.
	if waited < served/10 {
		t.Errorf("only %d of %d requests waited for the worker: the station was not saturated", waited, served)
	}
	if st := svc.Stats().Stations[api.Records]; st.Requests[api.OutcomeServed] != float64(served) || snap.Dropped != 0 {
		t.Errorf("%v served, %d in the log (%d dropped)", st.Requests[api.OutcomeServed], served, snap.Dropped)
	}
	t.Logf("%d served, %d waited, %d started early", served, waited, early)
}
