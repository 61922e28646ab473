package runcmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/transport"
)

// preflight checks, before the first record, that each service the run
// calls accepts a connection and then that each dependency's path is
// there and takes its method (pipeline.Answering): a wrong one refused
// here, exit 2, not twenty records failed with 404 or 405. A target that
// accepts no connection is said as records.Run says it.
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
	if errors.As(err, &ae) {
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
