package runcmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/transport"
)

// preflight checks, before the first record, that each service the run
// calls accepts a connection and then that each dependency's path takes
// its method (pipeline.Answering): a method the path's Allow lacks is
// refused here, exit 2, not twenty records failed with 405, and so is a
// lab route the target lacks (404). On one's own services a 404 to
// OPTIONS is said, not refused: a handler that answers only its own
// method (or a router's default) 404s every other, and a lookup of an
// unknown id may too, so it is no proof that the path is wrong. A target
// that accepts no connection is said as records.Run says it.
func (o *runOptions) preflight(cfg records.Config) error {
	ctx := context.Background()
	p, bases := cfg.PipelineOrLab(), cfg.CallBases()
	if err := p.Accepting(ctx, cfg.Dial, cfg.Wait, bases, cfg.Target); err != nil { // the target's below
		return usageErr("%v", runHint(fmt.Errorf("%w: %w", records.ErrUnreachable, err)))
	}
	if slices.Contains(slices.Collect(maps.Values(bases)), cfg.Target) {
		if err := transport.Accepting(ctx, cfg.Dial, cfg.Target, cfg.Wait); err != nil {
			return usageErr("%v", runHint(fmt.Errorf("%w: %w", records.ErrUnreachable, err)))
		}
	}
	err := p.Answering(ctx, cfg.Dial, bases)
	var ae *pipeline.AnswerError
	var silent *pipeline.SilentError
	switch {
	case errors.As(err, &silent):
		return usageErr("%v", runHint(fmt.Errorf("%w: %w", records.ErrUnreachable, err)))
	case errors.As(err, &ae) && ae.NoPath && o.pipelineFile != "":
		fmt.Fprintf(os.Stderr, "loadlab: run: %v (a service may answer 404 to OPTIONS alone): if its calls answer 404 too, %s\n", err, o.answerFix(ae))
		return nil
	case errors.As(err, &ae):
		return usageErr("run: %v; %s", err, o.answerFix(ae))
	}
	return err
}

// answerFix is what mends a dependency refused by preflight.
func (o *runOptions) answerFix(e *pipeline.AnswerError) string {
	what := "method or path"
	if e.NoPath {
		what = "path or base_url"
	}
	fix := fmt.Sprintf("fix the dependency's %s in %s", what, o.pipelineFile)
	if o.pipelineFile == "" {
		fix = "the lab's pipeline calls a loadlab mock service's routes: is --target one? (your own services: --pipeline FILE)"
	}
	if _, ok := o.callURLs.M[e.Dependency]; ok {
		fix += fmt.Sprintf(", or --call-url %s=URL", e.Dependency)
	}
	return fix
}
