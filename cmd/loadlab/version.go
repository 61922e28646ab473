package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion prints the module's version, the VCS revision the binary was
// built from (and whether the tree had changes) and the Go version, from
// the build information Go embeds, e.g. "loadlab v0.0.0-20261202…
// (revision 1a2b3c4d5e6f, 2026-12-02T08:00:00Z, modified) go1.26.0 linux/amd64".
func runVersion(args []string, stdout io.Writer) error {
	_, parse := newFlagSet("version", "Prints loadlab's module version, the VCS revision it was built from and the Go version.\n", stdout)
	if err := parse(args); err != nil {
		return err
	}
	version, rev := "unknown", map[string]string{"vcs.revision": "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			rev[s.Key] = s.Value
		}
	}
	r := "revision " + rev["vcs.revision"][:min(12, len(rev["vcs.revision"]))]
	if rev["vcs.time"] != "" {
		r += ", " + rev["vcs.time"]
	}
	if rev["vcs.modified"] == "true" {
		r += ", modified"
	}
	fmt.Fprintf(stdout, "loadlab %s (%s) %s %s/%s\n", version, r, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
