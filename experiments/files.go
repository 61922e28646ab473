// Package experiments holds the experiment and hypotheses files that ship
// with loadlab, built into the binary, so that `loadlab experiment` runs
// the replication from any directory. The files beside this one are the
// same bytes: `--file` and `--hypotheses` read them, or a user's own, from
// disk.
package experiments

import "embed"

// Files are this folder's experiment files (*.yaml) and the locks of their
// hypotheses (*.lock), by base name.
//
//go:embed *.yaml *.lock
var Files embed.FS

// Replication and ReplicationHypotheses name, in Files, the replication
// experiment and the hypotheses it is preregistered with.
const (
	Replication           = "replication.yaml"
	ReplicationHypotheses = "hypotheses-v5.yaml"
)
