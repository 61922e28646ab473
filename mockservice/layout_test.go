package mockservice_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The server is imported by nothing but its own tree and the commands that
// start it in-process: clients speak to it through package api. And no
// package imports a command. (ARCHITECTURE.md states these rules.)
func TestOnlyCommandsImportTheServer(t *testing.T) {
	const module = "github.com/loadlab/loadlab/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			switch {
			case imp == module+"mockservice" && !strings.HasPrefix(pkg, module+"mockservice") && !strings.HasPrefix(pkg, module+"cmd/"):
				t.Errorf("%s imports the server; clients use mockservice/api", pkg)
			case strings.HasPrefix(imp, module+"cmd/"):
				t.Errorf("%s imports the command %s", pkg, imp)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d packages listed", checked)
	}
}
