package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Flag is the help of a command's --ui flag.
const Flag = "serve a live dashboard of the work on this address (e.g. 127.0.0.1:8089; a port alone or :PORT is on\n" +
	"loopback, 0.0.0.0:PORT on every interface); the page is built in and needs nothing from the internet"

// KeepFlag is the help of a command's --ui-keep flag.
const KeepFlag = "with --ui, keep serving the dashboard (and the report it links) after the work ends, until Ctrl-C"

// Serve starts the dashboard of a command on addr ("" serves none: nil)
// and says its URL on w; keep keeps it after the work ends, until a
// signal.
func Serve(addr string, keep bool, kind, title string, w io.Writer) (*Server, error) {
	if addr == "" {
		return nil, nil
	}
	s := New(kind, title)
	s.keep, s.w = keep, w
	url, err := s.Start(addr)
	if err != nil {
		return nil, cli.UsageErr("--ui: %v", err)
	}
	s.url = url
	fmt.Fprintf(w, "loadlab: dashboard at %s\n", url)
	return s, nil
}

// WatchRecords charts a record run of cfg from its registry (which must
// gather) while ctx lasts: its
// budgets from the strategy, its writes from the pipeline's last step, and
// the system of record's queue when the pipeline is the lab's (the target
// is then a loadlab mock service; another service gets nothing but the
// run's own calls).
func (s *Server) WatchRecords(ctx context.Context, cfg records.Config) {
	reg, ok := cfg.Registerer.(prometheus.Gatherer)
	if s == nil || !ok {
		return
	}
	p := cfg.Pipeline
	if p == nil {
		p = pipeline.Lab()
	}
	st := cfg.Strategy
	budgets := Budgets{}
	for d, n := range st.Permits {
		budgets[d] = n
	}
	var mock *api.Client
	if cfg.Pipeline == nil {
		mock = &api.Client{BaseURL: cfg.Target, Token: cfg.AdminToken}
	}
	var deps []string
	for _, d := range p.Dependencies {
		deps = append(deps, d.Name)
	}
	go s.WatchRun(ctx, reg, budgets, deps, p.Steps[len(p.Steps)-1].Dependency, cfg.TimeScale, mock)
}

// End says how the work ended — done, interrupted (exit 130) or failed,
// with err's line — and where its report is, then stops serving once the
// browsers have the last state.
func (s *Server) End(err error, reportDir string) {
	if s == nil {
		return
	}
	status, msg := StatusDone, "finished"
	var ee *cli.ExitError
	switch {
	case errors.As(err, &ee) && ee.Code == cli.ExitInterrupted:
		status, msg = StatusInterrupted, cli.OneLine(err)
	case err != nil:
		status, msg = StatusFailed, cli.OneLine(err)
	}
	if reportDir != "" {
		if abs, err := filepath.Abs(reportDir); err == nil {
			reportDir = abs
		}
		msg += "; report: " + filepath.Join(reportDir, "report.html")
	}
	s.Finish(status, msg, reportDir)
	if s.keep {
		fmt.Fprintf(s.w, "loadlab: the dashboard stays at %s until Ctrl-C\n", s.url)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		<-ctx.Done()
		stop()
	}
	_ = s.Close()
}
