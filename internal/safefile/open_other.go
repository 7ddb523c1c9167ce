//go:build !unix

package safefile

import "os"

// openNoBlock opens path read-only.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

// noBlock is the open flag that keeps an open from blocking on a FIFO.
const noBlock = 0
