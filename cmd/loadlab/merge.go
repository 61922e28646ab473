package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// splitArgs separates a command's flags from its other arguments, which
// may come before or after them; the flags named in valued take the next
// argument as their value ("--out DIR"), every other flag is a switch.
func splitArgs(args []string, valued ...string) (flags, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if slices.Contains(valued, name) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, rest
}

// mergeHint adds to a merge's refusal the command that writes what it
// expected, where there is one.
func mergeHint(err error) error {
	switch {
	case errors.Is(err, judge.ErrNotShard):
		return fmt.Errorf("%w (loadlab experiment --shard i/n writes them)", err)
	case errors.Is(err, resultsfile.ErrNoResultsLine):
		return fmt.Errorf("%w (loadlab experiment --json-lines writes one)", err)
	case errors.Is(err, loadresult.ErrNotSegment):
		return fmt.Errorf("%w (loadlab load --segment i/n --json writes them)", err)
	}
	return err
}

// writable creates dir if needed and checks a file can be written in it.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s cannot be created: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".loadlab-writable-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func runMerge(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("merge --out DIR PARTIAL...",
		"Combines the segments of one load (loadlab load --segment i/n --json, each written to a file) into one\n"+
			"load result written to --out FILE (outcomes, counts and per-second timeline summed, latency percentiles\n"+
			"from the merged histograms); refused, naming them: segments of different schedules, a segment missing\n"+
			"or given twice, an interrupted segment.\n\n"+
			"Combines the partial results of the n shards of one experiment matrix (loadlab experiment --shard i/n)\n"+
			"into one results folder — results.json, report.md, report.html — with the same runs, seeds, cells and\n"+
			"verdicts one machine running the matrix computes. A PARTIAL is a shard's results folder, a folder holding\n"+
			"shard folders (each subfolder with a results.json), or a log of loadlab experiment --json-lines (kubectl\n"+
			"logs; lines that are not JSON are skipped). Refused, naming them: partials of different experiment files,\n"+
			"designs, hypotheses or binaries, a shard missing or given twice, an interrupted shard.\n\n"+
			"Exit codes: 0 merged; 2 bad input or partials that do not merge (nothing written).\n", stdout)
	out := fs.String("out", "", "results folder to write, or the file of a merged load (required)")
	// PARTIAL arguments come before or after the flags.
	flags, paths := splitArgs(args, "out")
	if err := parse(flags); err != nil {
		return err
	}
	if *out == "" {
		return usageErr("merge: --out DIR is required")
	}
	if len(paths) == 0 {
		return usageErr("merge: which partial results? (shard folders, a folder of them, or --json-lines logs)")
	}
	// Segments of a load (loadlab load --segment i/n --json) merge into
	// one load result.
	if loadresult.IsFile(paths[0]) {
		return mergeLoad(paths, *out, stdout)
	}
	var parts []judge.Part
	for _, p := range paths {
		ps, err := readParts(p)
		if err != nil {
			return usageErr("merge: %v", mergeHint(err))
		}
		parts = append(parts, ps...)
	}
	spec := parts[0].Results.Experiment
	mockCfg := spec.MockConfig()
	res, err := judge.Merge(parts, mockCfg)
	if err != nil {
		return usageErr("%v", mergeHint(err))
	}
	if err := writable(*out); err != nil {
		return usageErr("--out: %v", err)
	}
	if err := report.WriteOutputs(*out, res); err != nil {
		return err
	}
	report.WriteSummary(stdout, res)
	fmt.Fprintf(stdout, "\nMerged %d shards (%d runs) into %s, %s and %s\n", len(parts), len(res.Runs),
		filepath.Join(*out, "results.json"), filepath.Join(*out, "report.md"), filepath.Join(*out, "report.html"))
	return nil
}

// readParts reads one PARTIAL argument: a results folder, a folder of
// results folders, or a --json-lines log.
func readParts(path string) ([]judge.Part, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		r, err := resultsfile.ReadResultsLog(path)
		if err != nil {
			return nil, err
		}
		return []judge.Part{{Source: path, Results: r}}, nil
	}
	if _, err := os.Stat(filepath.Join(path, "results.json")); err == nil {
		r, err := resultsfile.ReadResults(filepath.Join(path, "results.json"))
		if err != nil {
			return nil, err
		}
		return []judge.Part{{Source: path, Results: r}}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(path, e.Name(), "results.json")); err == nil {
				dirs = append(dirs, filepath.Join(path, e.Name()))
			}
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s holds no results.json, nor folders that do", path)
	}
	sort.Strings(dirs)
	var parts []judge.Part
	for _, d := range dirs {
		r, err := resultsfile.ReadResults(filepath.Join(d, "results.json"))
		if err != nil {
			return nil, err
		}
		parts = append(parts, judge.Part{Source: d, Results: r})
	}
	return parts, nil
}
