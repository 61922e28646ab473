package testkit

import (
	"net/http"
	"sync"
	"time"
)

// Station is a service written apart from the mock service, for tests
// that probe or copy "a service of one's own": workers serving for
// service each, slots waiting for one, status (with Retry-After when
// retryAfter is set) beyond, 200 otherwise. Make it inside the test's
// synctest bubble when the test keeps a fake clock.
func Station(workers, slots int, service time.Duration, status int, retryAfter string) http.Handler {
	var mu sync.Mutex
	inside := 0
	free := make(chan struct{}, workers)
	for range workers {
		free <- struct{}{}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if inside >= workers+slots {
			mu.Unlock()
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(status)
			return
		}
		inside++
		mu.Unlock()
		<-free
		time.Sleep(service)
		free <- struct{}{}
		mu.Lock()
		inside--
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
}
