// Package pipelines holds the pipeline files that ship with loadlab: the
// lab's (lab.yaml), the default of every command.
package pipelines

import (
	_ "embed"
	"sync"

	"github.com/loadlab/loadlab/client/pipeline"
)

// LabFile is the lab pipeline's path in the repository, as errors name it.
const LabFile = "experiments/pipelines/lab.yaml"

//go:embed lab.yaml
var lab []byte

// Lab returns the lab's pipeline: three enrichment calls, then one write.
// It is parsed once and shared: read it, do not change it.
var Lab = sync.OnceValue(func() *pipeline.Pipeline {
	p, err := pipeline.Parse(LabFile, lab)
	if err != nil {
		panic("the embedded lab pipeline is invalid: " + err.Error())
	}
	return p
})
