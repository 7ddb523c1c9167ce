package examples

import "embed"

// Files holds every example, by file name (e.g. "union.yaml").
//
//go:embed *.yaml
var Files embed.FS
