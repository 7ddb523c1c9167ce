//go:build !linux

package cluster

import "log"

// NetnsSupported reports that --netns needs Linux.
func NetnsSupported() error { return ErrNetnsUnsupported }

// SweepStaleNetns has nothing to sweep off Linux.
func SweepStaleNetns() ([]string, error) { return nil, ErrNetnsUnsupported }

// netnsNet exists on Linux only; openNetns says so.
type netnsNet struct {
	layout netnsLayout
	netem  bool
}

func openNetns([]string, float64, *log.Logger) (*netnsNet, error) { return nil, ErrNetnsUnsupported }

func (n *netnsNet) command(host, exe string, args []string) (string, []string) { return exe, args }
func (n *netnsNet) cut(int, [][]string) error                                  { return ErrNetnsUnsupported }
func (n *netnsNet) heal(int) error                                             { return ErrNetnsUnsupported }
func (n *netnsNet) close() error                                               { return nil }
