package experiments

import (
	"github.com/loadlab/loadlab/client/yamlfile"
)

// FileError is a problem in a YAML file, with where it is.
type FileError = yamlfile.Error

var (
	readYAML = yamlfile.Read
	lineOf   = yamlfile.Line
)
