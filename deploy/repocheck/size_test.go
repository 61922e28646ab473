package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits of non-test code: a function fits on a screen, a file does
// one job, a package is one room.
const (
	maxFunctionLines = 80
	maxFileLines     = 400
	maxPackageLines  = 2200
)

// exempt names functions allowed past maxFunctionLines, "file:Func" (a
// method as "file:Type.Method"), each with the reason it reads best whole.
// None is needed today; add one only with its reason.
var exempt = map[string]string{}

// goFile is one non-test Go file: its path from the module's root, its
// package's folder and its lines.
type goFile struct {
	path, dir string
	lines     int
	ast       *ast.File
}

// goFiles parses every non-test Go file of the module (testdata and
// hidden folders aside).
func goFiles(t *testing.T, fset *token.FileSet) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		out = append(out, goFile{path: path, dir: filepath.Dir(path), lines: strings.Count(string(src), "\n"), ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found %d Go files", len(out))
	}
	return out
}

// funcName is a function's name as exempt spells it.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// No non-test function over maxFunctionLines (from func to its closing
// brace) but those exempted by name with a reason; no non-test file over
// maxFileLines; no package over maxPackageLines of non-test code.
func TestSizeLimits(t *testing.T) {
	fset := token.NewFileSet()
	perPackage := map[string]int{}
	used := map[string]bool{}
	for _, f := range goFiles(t, fset) {
		perPackage[f.dir] += f.lines
		if f.lines > maxFileLines {
			t.Errorf("%s: %d lines, more than %d: a file past that is usually doing two jobs", f.path, f.lines, maxFileLines)
		}
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			name := f.path + ":" + funcName(fd)
			if _, ok := exempt[name]; ok {
				used[name] = true
				continue
			}
			if n > maxFunctionLines {
				t.Errorf("%s: %d lines, more than %d", name, n, maxFunctionLines)
			}
		}
	}
	for dir, n := range perPackage {
		if n > maxPackageLines {
			t.Errorf("%s: %d lines of non-test code, more than %d: a package past that is more than one room", dir, n, maxPackageLines)
		}
	}
	for name, why := range exempt {
		if !used[name] {
			t.Errorf("exempt %s (%s): no such function", name, why)
		}
		if why == "" {
			t.Errorf("exempt %s: give the reason it reads best whole", name)
		}
	}
}
