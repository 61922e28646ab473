package mockservice

import (
	"runtime/debug"
	"sync"
)

// Version is the running build's version, as the service reports it in
// GET /healthz and in its api.HeaderMock header: the main module's version
// when the binary was built from a tagged or versioned module, else the VCS
// revision shortened to 12 characters ("-dirty" added when the working tree
// had changes), else "devel" (as in tests, whose binaries carry no VCS
// stamp).
func Version() string {
	return versionOnce()
}

var versionOnce = sync.OnceValue(func() string { return versionOf(debug.ReadBuildInfo()) })

// revisionLen is how much of a VCS revision names a build, as git's short
// hashes do.
const revisionLen = 12

// versionOf derives the version from build information (ok false: none).
func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "devel"
	}
	if len(revision) > revisionLen {
		revision = revision[:revisionLen]
	}
	if modified {
		revision += "-dirty"
	}
	return revision
}
