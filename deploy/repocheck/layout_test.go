// Package repocheck holds the repository's own checks, tests only: the
// layout's rules and the map of it (this file: which folder may import
// which, and ARCHITECTURE.md's import column against `go list`), the size
// limits (size_test.go) and the product's words (words_test.go). They
// run from the module's root, whatever folder go test starts them in.
package repocheck_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/loadlab/loadlab"

// TestMain runs the checks from the module's root: the folder above that
// holds go.mod.
func TestMain(m *testing.M) {
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			break
		}
		if up := filepath.Dir(dir); up != dir {
			dir = up
		} else {
			err = fmt.Errorf("no go.mod above %s", dir)
		}
	}
	if err == nil {
		err = os.Chdir(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// rank orders the top-level folders: a package may import only packages
// of its own rank or below. cmd/ composes everything; experiments/ runs
// and judges with the clients; client/ drives dependencies through
// budgets; budgets/ guards calls; mockservice/ is the dependencies and
// their wire contract. deploy/ holds tests only, of everything.
var rank = map[string]int{"mockservice": 1, "budgets": 2, "client": 3, "experiments": 4, "cmd": 5, "deploy": 6}

// pure packages import nothing of ours but each other.
var pure = []string{"experiments/models", "mockservice/latency"}

// servers are the mock service itself and its virtual copies of a user's
// dependencies: only mockservice/… and cmd/ may import them; clients talk
// to them through mockservice/api, tests start them with mocktest.
var servers = []string{"mockservice", "mockservice/virtual"}

// goPackage is what `go list -json` says of a package.
type goPackage struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// ours lists the module's packages by path relative to the module ("."
// for its root), with their imports of ours, as `go list` gives them.
func ours(t *testing.T) map[string]goPackage {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "list", "-json", "./...")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = rel(p.ImportPath)
		for _, list := range []*[]string{&p.Imports, &p.TestImports, &p.XTestImports} {
			var mine []string
			for _, imp := range *list {
				if imp == module || strings.HasPrefix(imp, module+"/") {
					mine = append(mine, rel(imp))
				}
			}
			*list = mine
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// rel is an import path relative to the module.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// top is a package's top-level folder.
func top(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	return first
}

// No package, nor its tests, imports a folder above its own; nothing
// outside mockservice/ and cmd/ imports a server, in code or tests; the
// pure packages import nothing of ours but each other; nothing imports
// cmd/.
func TestLayoutRules(t *testing.T) {
	pkgs := ours(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of ours", len(pkgs))
	}
	for _, p := range pkgs {
		if p.ImportPath == "." {
			continue
		}
		r, ok := rank[top(p.ImportPath)]
		if !ok {
			t.Errorf("%s: not in a top-level folder of the layout (%v)", p.ImportPath, rank)
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if rank[top(imp)] > r {
				t.Errorf("%s (or its tests) imports %s: a folder above its own", p.ImportPath, imp)
			}
		}
		for _, imp := range p.Imports {
			// cmd/internal/… is what the commands share (Go lets only
			// cmd/… import it); a command itself is imported by nothing.
			if top(imp) == "cmd" && !strings.HasPrefix(imp, "cmd/internal/") {
				t.Errorf("%s imports %s: nothing imports a command", p.ImportPath, imp)
			}
			if slices.Contains(pure, p.ImportPath) && !slices.Contains(pure, imp) {
				t.Errorf("%s imports %s: it is pure, and may import only %v", p.ImportPath, imp, pure)
			}
		}
		if top(p.ImportPath) == "mockservice" || top(p.ImportPath) == "cmd" {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if slices.Contains(servers, imp) {
				t.Errorf("%s imports a server (%s): talk to it through mockservice/api, start it with mockservice/mocktest", p.ImportPath, imp)
			}
		}
	}
}

// ARCHITECTURE.md's table names every package once, and its import column
// is what `go list` says each imports of ours (code, not tests).
func TestArchitectureMatchesTheImports(t *testing.T) {
	pkgs := ours(t)
	rows := architectureRows(t)
	for pkg, imports := range rows {
		p, ok := pkgs[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md: %s is not a package (go list ./...)", pkg)
			continue
		}
		want := slices.Sorted(slices.Values(p.Imports))
		if !slices.Equal(imports, want) {
			t.Errorf("ARCHITECTURE.md: %s imports %s; go list says %s", pkg, list(imports), list(want))
		}
	}
	for pkg := range pkgs {
		if _, ok := rows[pkg]; !ok && pkg != "." {
			t.Errorf("ARCHITECTURE.md has no row for %s", pkg)
		}
	}
}

// architectureRows reads ARCHITECTURE.md's package table: the first
// column a package in backquotes, the last its imports of ours, each in
// backquotes, or "—" for none.
func architectureRows(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(strings.Trim(sc.Text(), "| "), " | ")
		if len(cols) != 3 || !strings.HasPrefix(cols[0], "`") {
			continue
		}
		pkg := strings.Trim(cols[0], "`")
		if _, dup := rows[pkg]; dup {
			t.Errorf("ARCHITECTURE.md: %s has two rows", pkg)
		}
		rows[pkg] = quoted(cols[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("ARCHITECTURE.md: no package table")
	}
	return rows
}

// quoted is the backquoted words of s, sorted.
func quoted(s string) []string {
	parts := strings.Split(s, "`")
	var out []string
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	slices.Sort(out)
	return out
}

func list(pkgs []string) string {
	if len(pkgs) == 0 {
		return "nothing of ours"
	}
	return fmt.Sprint(pkgs)
}
