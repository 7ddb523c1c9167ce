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
// topology without one or two sources, a sink, the host, or a host and an
// operator constructor for every fragment, or a source host without a
// usable generator. NewNode calls it first, so a driver built in Go gets
// an error where it would otherwise panic later. Checking a valid
// configuration allocates nothing.
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
	// What the node uses of the topology, checked without allocating:
	// drivers validate the whole topology once (Topology.Validate), and
	// every host's NewNode repeats these checks.
	t := c.Topology
	if len(t.Sources) == 0 || len(t.Sources) > 2 {
		return fmt.Errorf("%w: node %q: topology: need 1 or 2 sources, have %d", ErrNodeConfig, c.Host, len(t.Sources))
	}
	if t.Sink == "" {
		return fmt.Errorf("%w: node %q: topology: Sink: empty", ErrNodeConfig, c.Host)
	}
	if _, ok := t.FragOf(c.Host); !ok {
		return fmt.Errorf("%w: node %q: not in the topology", ErrNodeConfig, c.Host)
	}
	if frag, _ := t.FragOf(c.Host); frag == FragSource {
		if err := c.Source.Validate(); err != nil {
			return fmt.Errorf("%w: node %q: Source: %w", ErrNodeConfig, c.Host, err)
		}
	}
	for _, f := range t.Frags {
		if len(f.Hosts) == 0 {
			return fmt.Errorf("%w: node %q: topology: fragment %s has no host", ErrNodeConfig, c.Host, f.Name)
		}
		if f.NewOps == nil {
			return fmt.Errorf("%w: node %q: topology: fragment %s: NewOps: nil", ErrNodeConfig, c.Host, f.Name)
		}
	}
	return nil
}
