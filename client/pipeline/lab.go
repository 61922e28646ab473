package pipeline

import (
	_ "embed"
	"sync"
)

// LabFile is the lab pipeline's path in the repository, as errors name it.
const LabFile = "client/pipeline/lab.yaml"

//go:embed lab.yaml
var lab []byte

// Lab returns the lab's pipeline, the default of every command: three
// enrichment calls, then one write. It is parsed once and shared: read it,
// do not change it.
var Lab = sync.OnceValue(func() *Pipeline {
	p, err := Parse(LabFile, lab)
	if err != nil {
		panic("the embedded lab pipeline is invalid: " + err.Error())
	}
	return p
})
