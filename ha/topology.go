package ha

import "fmt"

// Topology is the static deployment every node knows: the source hosts
// (source i feeds input port i of the first fragment), the chain of
// protected fragments and the sink host.
type Topology struct {
	Sources []string
	Frags   []Fragment
	Sink    string
}

// Fragment is one protected unit of deployment and failure.
type Fragment struct {
	// Name is the fragment name; its initial primary host has the same name.
	Name string
	// Hosts are the fragment's hosts in takeover order: the initial
	// primary, its replicas, then spares.
	Hosts []string
	// Inputs is the number of input ports (1, or 2 for union and join in the first fragment).
	Inputs int
	// NewOps builds a fresh operator pipeline for one host.
	NewOps func() ([]Operator, error)
}

// FragSource and the sink's fragment index mark the unprotected ends.
const FragSource = -1

// SinkFrag is the fragment index used for the sink host.
func (t *Topology) SinkFrag() int { return len(t.Frags) }

// FragOf returns the fragment index of host (FragSource for a source,
// SinkFrag for the sink) and whether the host exists.
func (t *Topology) FragOf(host string) (int, bool) {
	for _, s := range t.Sources {
		if s == host {
			return FragSource, true
		}
	}
	if host == t.Sink {
		return t.SinkFrag(), true
	}
	for i, f := range t.Frags {
		for _, h := range f.Hosts {
			if h == host {
				return i, true
			}
		}
	}
	return 0, false
}

// Hosts lists every host: sources, fragment hosts in order, then the sink.
func (t *Topology) Hosts() []string {
	hs := append([]string(nil), t.Sources...)
	for _, f := range t.Frags {
		hs = append(hs, f.Hosts...)
	}
	return append(hs, t.Sink)
}

// Validate checks names are unique and every fragment has a host.
func (t *Topology) Validate() error {
	seen := map[string]bool{}
	for _, h := range t.Hosts() {
		if h == "" {
			return fmt.Errorf("topology: empty host name")
		}
		if seen[h] {
			return fmt.Errorf("topology: host %q defined twice", h)
		}
		seen[h] = true
	}
	if len(t.Sources) == 0 || len(t.Sources) > 2 {
		return fmt.Errorf("topology: need 1 or 2 sources, have %d", len(t.Sources))
	}
	for _, f := range t.Frags {
		if len(f.Hosts) == 0 {
			return fmt.Errorf("topology: fragment %s has no host", f.Name)
		}
	}
	return nil
}
