package mockcmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/virtualcopy"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// With --pipeline, a copy answers the paths its dependency calls besides
// the probe's: a templated path as every path below its fixed part; a
// dependency the pipeline lacks, or called with another method, is
// refused by name.
func TestCopyPathsFromAPipeline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "shop.yaml")
	os.WriteFile(file, []byte(`name: shop
dependencies:
  - {name: lookup, method: GET, path: "/lookup/{{.Index}}", base_url: "http://127.0.0.1:9000"}
  - {name: ledger, method: POST, path: /ledger, body: '{"id":{{json .ID}}}', base_url: "http://127.0.0.1:9001"}
steps:
  - {dependency: lookup}
  - {dependency: ledger, required: true}
`), 0o644)
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		copy virtualcopy.Copy
		want []string
		err  string
	}{
		{virtualcopy.Copy{Name: "lookup", Method: "GET", Path: "/lookup/1"}, []string{"/lookup/1", "/lookup/*"}, ""},
		{virtualcopy.Copy{Name: "ledger", Method: "POST", Path: "/ledger"}, nil, ""},
		{virtualcopy.Copy{Name: "ledgr", Method: "POST", Path: "/ledger"}, nil, `has no dependency ledgr (it has lookup, ledger); did you mean "ledger"?`},
		{virtualcopy.Copy{Name: "ledger", Method: "GET", Path: "/ledger"}, nil, "probe it with --method POST"},
	} {
		paths, err := pathsOf(&c.copy, p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.copy.Name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(paths, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.copy.Name, paths, err, c.want)
		}
	}
}

// The copies loadlab mock serves for a pipeline pass loadlab run's
// pre-flight (pipeline.Answering): each answers OPTIONS on the paths its
// dependency calls, a templated one too, with 204 and Allow; a path it
// does not answer is its 404, refused. So does the lab's mock service,
// on its own and as an instance behind /i/k, for the lab's pipeline (a
// refused connection would pass too: the 404s say the requests arrived).
func TestCopiesAnswerThePreflight(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "shop.yaml")
	writePipeline(t, file, `name: shop
dependencies:
  - {name: ledger, method: POST, path: "/ledger/{{.ID}}", body: '{"id":{{json .ID}}}', base_url: "http://127.0.0.1:9001"}
steps:
  - {dependency: ledger, required: true}
`)
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		o := options{pipelineFile: file, probes: cli.Strings{M: map[string]string{"ledger": probeFile(t, dir, 3, 1, 8)}}}
		_, cfg, err := o.fit()
		if err != nil {
			t.Fatal(err)
		}
		mc := mocktest.StartCopies(t, mocktest.CopiesOptions{Config: cfg, InMemory: true})
		if err := p.Answering(ctx, mc.Dial, map[string]string{"ledger": mc.URLs["ledger"]}); err != nil {
			t.Errorf("the copy: %v", err)
		}
		var ae *pipeline.AnswerError
		err = p.Answering(ctx, mc.Dial, map[string]string{"ledger": mc.URLs["ledger"] + "/v2"})
		if !errors.As(err, &ae) || !ae.NoPath || ae.URL != mc.URLs["ledger"]+"/v2/ledger/"+pipeline.AnswerID {
			t.Errorf("the copy, on a path it does not answer: %v; want its 404", err)
		}
		mcfg := config.Default()
		mcfg.TimeScale = 0.05
		m := mocktest.Start(t, mocktest.Options{Config: mcfg, Instances: 2, InMemory: true})
		for _, in := range m.Instances {
			if err := pipeline.Lab().Answering(ctx, m.Dial, map[string]string{"enrichment": in.URL, "records": in.URL}); err != nil {
				t.Errorf("the mock service at %s: %v", in.URL, err)
			}
			if err := pipeline.Lab().Answering(ctx, m.Dial, map[string]string{"enrichment": in.URL + "/v2"}); !errors.As(err, &ae) || !ae.NoPath {
				t.Errorf("the mock service at %s, on a path it does not answer: %v; want its 404", in.URL, err)
			}
		}
	})
}

func writePipeline(t *testing.T, file, text string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
