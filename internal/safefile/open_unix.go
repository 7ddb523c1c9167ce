//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNoBlock opens path read-only without blocking on a FIFO with no
// writer (O_NONBLOCK changes nothing for a regular file).
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// noBlock is the open flag that keeps an open from blocking on a FIFO.
const noBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY
