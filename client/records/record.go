package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
)

// process runs one record to its terminal state, and returns it with the
// record's id: the pipeline's steps in order (package pipeline says how a
// failed call ends its step, and the record when the step is required).
func (r *runner) process(ctx context.Context, i int) (State, string) {
	id := fmt.Sprintf("%s%05d", r.cfg.RunID, i)
	write := len(r.pipeline.Steps) - 1
	complete := true
	for si, step := range r.pipeline.Steps {
		dep := r.pipeline.Dependency(step.Dependency)
		for n := 1; n <= step.Repeat; n++ {
			if step.Required && ctx.Err() != nil { // interrupted: the required call is not sent
				return Interrupted, id
			}
			data := pipeline.Data{ID: id, Index: i, Step: n, Complete: complete}
			path, body, err := dep.Render(data)
			var headers map[string]string
			if err == nil {
				headers, err = dep.RenderHeaders(data)
			}
			if err != nil { // the templates rendered at load; an id can still break one
				r.countKind(dep.Name, TemplateKind(err))
				return Failed, id
			}
			call := r.call(dep, path, body, headers)
			isWrite := dep.Name == r.pipeline.Write()
			if isWrite {
				call = r.tally.countWrites(call)
			}
			res, earlierUnanswered := r.retry.do(ctx, r.budgets[dep.Name], dep.Name, isWrite, call, func(res budgets.Result) {
				if isWrite && res.Class == budgets.Rejected {
					r.tally.writeRejected()
				}
			})
			if si == write {
				switch res.Status {
				case http.StatusCreated:
					r.created.Add(1)
				case http.StatusOK:
					r.duplicate.Add(1)
				}
			}
			if res.Class == budgets.OK {
				continue
			}
			if res.Class == budgets.Error {
				r.countError(dep.Name, res)
			}
			if !step.Required {
				complete = false
				break
			}
			switch {
			case earlierUnanswered && si == write:
				// An earlier attempt was written without an answer: the
				// system of record may hold it whatever the last said.
				return WriteUnknown, id
			case res.Class == budgets.Rejected && si == write:
				return WriteRejected, id
			case res.Class == budgets.Rejected:
				return StepRejected, id
			case res.Status == 0 && res.Latency > 0 && !errors.Is(res.Err, errNotSent) && si == write:
				// Written, and no answer: the system of record may have
				// stored it. (Before the write, no answer means the record
				// was never written: it failed.)
				return WriteUnknown, id
			case res.Status == 0 && ctx.Err() != nil:
				// The interruption came before the call reached the wire.
				return Interrupted, id
			default: // never sent, or answered with another status
				return Failed, id
			}
		}
		if ctx.Err() != nil && si < write { // interrupted: nothing more is sent
			return Interrupted, id
		}
	}
	if complete {
		return Complete, id
	}
	return Incomplete, id
}

// call returns a call to dep at path with body that reads the whole answer
// within the call's context. An error before the request was written wraps
// errNotSent.
func (r *runner) call(dep *pipeline.Dependency, path string, body []byte, headers map[string]string) budgets.Call {
	base := r.cfg.callBase(*dep)
	sent := r.sent[dep.Name]
	return func(ctx context.Context) (int, error) {
		var wrote atomic.Bool
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				wrote.Store(true)
				if i.Err == nil { // written in full: the server can count it
					sent.Add(1)
				}
			},
		})
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, dep.Method, base+path, rd)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", errNotSent, err)
		}
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := r.http.Do(req)
		if err != nil {
			if !wrote.Load() {
				return 0, fmt.Errorf("%w: %w", errNotSent, err)
			}
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
}
