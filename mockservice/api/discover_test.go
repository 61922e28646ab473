package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// A target that accepts a connection and never answers is unreachable,
// and the error keeps its cause: the request's timeout, for errors.As.
func TestSilentTargetIsUnreachableWithItsCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		url0, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		hc := &http.Client{Transport: &http.Transport{DialContext: dial}}
		_, err := api.Client{BaseURL: url0, HTTP: hc, Dial: dial}.Discover(context.Background(), api.PathEnrich)
		var ue *url.Error
		if !errors.Is(err, api.ErrUnreachable) || !errors.As(err, &ue) || !ue.Timeout() {
			t.Errorf("got %v, want ErrUnreachable wrapping the request's timeout", err)
		}
	})
}
