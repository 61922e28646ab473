package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/transport"
)

// AnswerTimeout bounds the one request Answering sends each dependency.
const AnswerTimeout = 5 * time.Second

// AnswerID is the record id Answering renders the paths with: no run's.
const AnswerID = "loadlab-preflight"

// AnswerError is a dependency's service saying, to OPTIONS on the
// dependency's path, that it has no such path (404), or that the path
// does not take the dependency's method (405 or 501 with an Allow header
// that does not list it).
type AnswerError struct {
	Dependency, Method, URL string
	// Status is what the service answered ("404 Not Found"), Allow its
	// Allow header, if any.
	Status, Allow string
	// NoPath: the answer was 404.
	NoPath bool
}

func (e *AnswerError) Error() string {
	if e.NoPath {
		return fmt.Sprintf("dependency %s: OPTIONS %s answered %s: no such path for its %s calls", e.Dependency, e.URL, e.Status, e.Method)
	}
	return fmt.Sprintf("dependency %s: OPTIONS %s answered %s, Allow: %s: not its method %s", e.Dependency, e.URL, e.Status, e.Allow, e.Method)
}

// SilentError is a dependency's service that accepted a connection and
// answered nothing to OPTIONS within AnswerTimeout.
type SilentError struct{ Dependency, URL string }

func (e *SilentError) Error() string {
	return fmt.Sprintf("dependency %s: %s accepted a connection but did not answer OPTIONS within %v", e.Dependency, e.URL, AnswerTimeout)
}

// Answering asks each dependency's service (bases: where each is sent, by
// name) once, with OPTIONS on the dependency's path rendered for AnswerID,
// whether the path is there and takes the dependency's method; the error
// is an *AnswerError for the first that says no (404; 405 or 501 with an
// Allow that lacks the method). Any other answer passes: many services do
// not implement OPTIONS, and a 2xx, 400, 401, or 405 without Allow says
// nothing against the calls. So does a refused connection (Accepting's
// to report); a service that accepts and answers nothing within
// AnswerTimeout is a *SilentError. dial nil is the system's dialer.
//
// OPTIONS, not the dependency's method: it sends no body and changes
// nothing, where the real method would be one record's call more, counted
// (and, for a write, stored) by the service.
func (p *Pipeline) Answering(ctx context.Context, dial transport.Dialer, bases map[string]string) error {
	hc := transport.NewDial(1, dial)
	defer hc.CloseIdleConnections()
	for i := range p.Dependencies {
		d := &p.Dependencies[i]
		base := bases[d.Name]
		if base == "" {
			continue
		}
		if err := d.answering(ctx, hc, base); err != nil {
			return err
		}
	}
	return nil
}

// answering is Answering's request to one dependency.
func (d *Dependency) answering(ctx context.Context, hc *http.Client, base string) error {
	data := Data{ID: AnswerID, Step: 1, Complete: true}
	path, _, err := d.Render(data)
	if err != nil {
		return err
	}
	headers, err := d.RenderHeaders(data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, AnswerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, base+path, nil)
	if err != nil {
		return err
	}
	for k, v := range headers { // an Authorization, say: without it a service may answer 401 to every path
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		// A service that accepts a connection and answers nothing within
		// AnswerTimeout would answer no record either: said now, once.
		return &SilentError{Dependency: d.Name, URL: base + path}
	case err != nil:
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	allow := strings.Join(resp.Header.Values("Allow"), ", ")
	e := &AnswerError{Dependency: d.Name, Method: d.Method, URL: base + path, Status: resp.Status, Allow: allow}
	switch resp.StatusCode {
	case http.StatusNotFound:
		e.NoPath = true
		return e
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		if allow != "" && !allows(allow, d.Method) {
			return e
		}
	}
	return nil
}

// allows says whether an Allow header's value lists method (GET brings
// HEAD).
func allows(allow, method string) bool {
	for m := range strings.SplitSeq(allow, ",") {
		m = strings.TrimSpace(m)
		if strings.EqualFold(m, method) || (method == http.MethodHead && strings.EqualFold(m, http.MethodGet)) {
			return true
		}
	}
	return false
}
