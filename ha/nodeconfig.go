package ha

import (
	"errors"
	"fmt"
)

// ErrNodeConfig is returned (wrapped) by NewNode for a configuration it
// cannot build a node from.
var ErrNodeConfig = errors.New("invalid node configuration")

// Validate reports the first field of c that NewNode cannot build a node
// from, naming it: a missing host, topology, environment or strategy, a
// topology that does not hold together or lacks the host, a source host
// without a usable generator, or a fragment without an operator
// constructor. NewNode calls it first, so a driver
// built in Go gets an error where it would otherwise panic later.
func (c NodeConfig) Validate() error {
	switch {
	case c.Host == "":
		return fmt.Errorf("%w: Host: empty", ErrNodeConfig)
	case c.Topology == nil:
		return fmt.Errorf("%w: node %q: Topology: nil", ErrNodeConfig, c.Host)
	case c.Env == nil:
		return fmt.Errorf("%w: node %q: Env: nil", ErrNodeConfig, c.Host)
	case c.Strategy == nil:
		return fmt.Errorf("%w: node %q: Strategy: nil", ErrNodeConfig, c.Host)
	}
	if err := c.Topology.Validate(); err != nil {
		return fmt.Errorf("%w: node %q: %w", ErrNodeConfig, c.Host, err)
	}
	if _, ok := c.Topology.FragOf(c.Host); !ok {
		return fmt.Errorf("%w: node %q: not in the topology", ErrNodeConfig, c.Host)
	}
	if frag, _ := c.Topology.FragOf(c.Host); frag == FragSource {
		if err := c.Source.Validate(); err != nil {
			return fmt.Errorf("%w: node %q: Source: %w", ErrNodeConfig, c.Host, err)
		}
	}
	for _, f := range c.Topology.Frags {
		if f.NewOps == nil {
			return fmt.Errorf("%w: node %q: topology: fragment %s: NewOps: nil", ErrNodeConfig, c.Host, f.Name)
		}
	}
	return nil
}
