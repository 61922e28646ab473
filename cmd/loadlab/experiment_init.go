package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/starter"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// Where --init writes without --file and --hypotheses.
const (
	starterExperiment = "experiment.yaml"
	starterHypotheses = "hypotheses.yaml"
)

// initOptions are --init's flags.
type initOptions struct {
	init     bool
	pipeline string
	probes   cli.Strings
}

// writeStarter writes a starter experiment on one's own services and its
// hypotheses (--init): at --file and --hypotheses, or experiment.yaml and
// hypotheses.yaml; a file there already is refused without --force.
func (o *experimentOptions) writeStarter(stdout io.Writer) error {
	switch {
	case o.starter.pipeline == "":
		return usageErr("experiment: --init: which pipeline? Give --pipeline FILE and --probe NAME=FILE for each of its dependencies")
	case len(o.notResumed) > 0 && slices.ContainsFunc(o.notResumed, func(f string) bool { return !slices.Contains(initFlags, f) }):
		return usageErr("experiment: --init writes files and runs nothing: it takes %s", strings.Join(initFlags, ", "))
	}
	p, err := pipeline.Load(o.starter.pipeline)
	if err != nil {
		return usageErr("experiment: --pipeline: %v", err)
	}
	exp, hyp := cmpOr(o.file, starterExperiment), cmpOr(o.hypotheses, starterHypotheses)
	dir := filepath.Dir(exp)
	at := starter.Paths{Pipeline: relTo(dir, o.starter.pipeline), Probes: map[string]string{}}
	probes := map[string]probe.Result{}
	for _, name := range slices.Sorted(maps.Keys(o.starter.probes.M)) {
		file := o.starter.probes.M[name]
		if p.Dependency(name) == nil {
			return usageErr("experiment: --probe %s: pipeline %s has no dependency %s (it has %s)%s", name, p.Name, name, strings.Join(p.Names(), ", "), cli.Suggest(name, p.Names()))
		}
		if probes[name], err = probe.ReadFile(file); err != nil {
			return usageErr("experiment: --probe %s: %v", name, err)
		}
		at.Probes[name] = relTo(dir, file)
	}
	name := strings.TrimSuffix(filepath.Base(exp), filepath.Ext(exp))
	if o.file == "" {
		name = p.Name
	}
	expText, hypText, err := starter.Files(name, p, probes, at)
	if err != nil {
		return usageErr("experiment: --init: %v: give --probe NAME=FILE for each dependency (loadlab probe --json)", err)
	}
	for _, f := range []string{exp, hyp} {
		if _, err := os.Stat(f); err == nil && !o.force {
			return usageErr("experiment: --init: %s exists: choose another --file or --hypotheses, or give --force to replace it", f)
		}
	}
	if err := atomicfile.Write(exp, []byte(expText)); err != nil {
		return err
	}
	if err := atomicfile.Write(hyp, []byte(hypText)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote %s (every dependency against a virtual copy fitted from its probe; as-probed, and a slow and a smaller scenario per dependency; C2 against advised) and %s (claims to test).\n"+
		"Edit them, then lock the hypotheses before the first run and run it:\n"+
		"  loadlab preregister --file %s --hypotheses %s\n  loadlab experiment --file %[1]s --hypotheses %[2]s --out results/%[5]s\n", exp, hyp, exp, hyp, name)
	return nil
}

// initFlags are the flags --init takes.
var initFlags = []string{"--init", "--pipeline", "--probe", "--file", "--hypotheses", "--force"}

// relTo is path as a file in dir names it: relative to dir when both are
// on one tree, else absolute.
func relTo(dir, path string) string {
	abs, err1 := filepath.Abs(path)
	base, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return path
	}
	if rel, err := filepath.Rel(base, abs); err == nil {
		return rel
	}
	return abs
}

func cmpOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
