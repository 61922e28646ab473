package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateHelp = flag.Bool("update-help", false, "write testdata/help/*.txt from the current help")

// Every command's help is what testdata/help holds (go test -run
// TestHelpGolden ./cmd/loadlab -update-help writes it again): a change to
// a help text shows in the diff. Each opens with its purpose; a
// command with groups shows every flag in one of them.
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"load", "--help"}, {"probe", "--help"}, {"advise", "--help"}, {"mock", "--help"},
		{"experiment", "--help"}, {"check", "--help"}, {"merge", "--help"}, {"compare", "--help"}, {"preregister", "--help"}, {"version", "--help"},
		{"simulate", "--help"}, {"simulate", "concurrency", "--help"}, {"simulate", "admission", "--help"}, {"help", "run"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v: exit %d, %q", args, code, errb.String())
			continue
		}
		name := strings.Join(args[:len(args)-1], "-")
		if name == "" {
			name = "loadlab"
		}
		if args[0] == "help" {
			var direct bytes.Buffer
			run([]string{args[1], "--help"}, &direct, &errb)
			if direct.String() != out.String() {
				t.Errorf("loadlab help run differs from loadlab run --help")
			}
			continue
		}
		file := filepath.Join("testdata", "help", name+".txt")
		if *updateHelp {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil || string(want) != out.String() {
			t.Errorf("%v: the help differs from %s (%v); if the change is meant, run go test -run TestHelpGolden ./cmd/loadlab -update-help and read the diff", args, file, err)
		}
	}
	for cmd, groups := range helpGroups {
		var out, errb bytes.Buffer
		run(append(strings.Fields(cmd), "--help"), &out, &errb)
		if strings.Contains(out.String(), "\nOther flags:\n") {
			t.Errorf("%s: flags in no group:\n%s", cmd, out.String())
		}
		for _, g := range groups {
			for _, f := range g.Flags {
				if !strings.Contains(out.String(), "\n  -"+f+" ") && !strings.Contains(out.String(), "\n  -"+f+"\n") {
					t.Errorf("%s: group %s names -%s, which the command lacks", cmd, g.Name, f)
				}
			}
		}
		if intro := helpIntro[cmd]; !strings.Contains(out.String(), "\n\n"+intro) {
			t.Errorf("%s: the help does not open with its purpose and examples", cmd)
		}
	}
}
