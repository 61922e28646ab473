package mockcmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/virtualcopy"
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
		paths, err := pathsOf(c.copy, p)
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
