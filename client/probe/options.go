package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/mockservice/atomicfile"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Options are a probe as a command line gives it: a Config and where the
// result goes. The zero value is not valid: start Config from Default and
// set its Target.
type Options struct {
	// Config is the probe. An empty Method is GET, or POST when there is
	// a Body.
	Config Config
	// JSON prints the result as one JSON object, the plan and the progress
	// going to the progress writer; otherwise all of it goes to stdout, the
	// result as Markdown.
	JSON bool
	// Out, when not empty, is a folder (created if missing) that also
	// receives probe.json, probe.md and probe.html.
	Out string
}

// Resolve returns the Config the options give, validated. An error is a
// *field.Error naming a Config field in snake case ("concurrency",
// "ok_statuses").
func (o Options) Resolve() (Config, error) {
	cfg := o.Config
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
		if cfg.Body != "" {
			cfg.Method = http.MethodPost
		}
	}
	return cfg, cfg.Validate()
}

// ParseStatuses reads a comma-separated list of HTTP statuses ("200,201",
// for Config.OKStatuses and Config.RejectStatuses). Its error says what is
// wrong with s.
func ParseStatuses(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 100 || n > 599 {
			return nil, fmt.Errorf("%q is not an HTTP status", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// AddHeader adds a header given as "Name: value" to every request.
func (c *Config) AddHeader(line string) error {
	name, value, ok := strings.Cut(line, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q is not 'Name: value'", line)
	}
	if c.Headers == nil {
		c.Headers = http.Header{}
	}
	c.Headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

// Execute resolves o, then runs the probe: it prints the plan, a line per
// step as it ends, and the result (see Options.JSON), and writes the files
// of Options.Out. progress receives the plan and the steps with JSON (a
// terminal's stderr, say); without it they go to stdout.
//
// Its error is Resolve's or the folder's (a *field.Error: nothing was
// sent), Run's (ErrFirstStepFailed: nothing is printed but the plan and the
// steps), or a failure to write. A result with measured errors or a
// Partial one is no error: the caller judges it.
func Execute(ctx context.Context, o Options, stdout, progress io.Writer) (Result, error) {
	cfg, err := o.Resolve()
	if err != nil {
		return Result{}, err
	}
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return Result{}, field.Errorf("out", "%w", err)
		}
	}
	if !o.JSON {
		progress = stdout
	}
	if err := WritePlan(progress, cfg.Plan()); err != nil {
		return Result{}, err
	}
	res, err := Run(ctx, cfg, func(s Step) { fmt.Fprintln(progress, StepLine(s)) })
	if err != nil {
		return res, err
	}
	if o.JSON {
		err = WriteJSON(stdout, res)
	} else {
		fmt.Fprintln(stdout)
		err = WriteMarkdown(stdout, res)
	}
	if err == nil && o.Out != "" {
		err = WriteFiles(o.Out, res)
	}
	return res, err
}

// WriteJSON writes the result as one indented JSON object.
func WriteJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFiles writes probe.json, probe.md and probe.html into dir, which
// must exist, each whole or not at all (atomicfile), as loadlab writes
// every file it keeps.
func WriteFiles(dir string, r Result) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer, Result) error
	}{{"probe.json", WriteJSON}, {"probe.md", WriteMarkdown}, {"probe.html", WriteHTML}} {
		var buf bytes.Buffer
		if err := f.write(&buf, r); err != nil {
			return fmt.Errorf("probe: writing %s: %w", f.name, err)
		}
		if err := atomicfile.Write(filepath.Join(dir, f.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
