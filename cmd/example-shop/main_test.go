package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// codes sends n requests to h at once and counts their statuses.
func codes(h http.Handler, method, path string, n int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
			mu.Lock()
			got[rec.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// Orders serves as many at once as it has workers and queue slots and
// refuses the rest with 503; stock serves one lookup of a burst at its
// rate and refuses the rest with 429, then serves again a token later;
// neither answers another route.
func TestTheShopRefusesAsDocumented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if got := codes(orders(2, 1, 10*time.Millisecond), http.MethodPost, "/orders", 5); got[http.StatusCreated] != 3 || got[http.StatusServiceUnavailable] != 2 {
			t.Errorf("orders with 2 workers and 1 slot, 5 at once: %v", got)
		}
		s := stock(10, 10*time.Millisecond)
		if got := codes(s, http.MethodGet, "/stock/1", 3); got[http.StatusOK] != 1 || got[http.StatusTooManyRequests] != 2 {
			t.Errorf("stock at 10/s, 3 at once: %v", got)
		}
		time.Sleep(100 * time.Millisecond)
		if got := codes(s, http.MethodGet, "/stock/2", 1); got[http.StatusOK] != 1 {
			t.Errorf("stock a token later: %v", got)
		}
		if got := codes(s, http.MethodPost, "/stock/2", 1); got[http.StatusNotFound] != 1 {
			t.Errorf("stock, POST: %v", got)
		}
	})
}
