package ha

import "fmt"

// Strategy is one HA protocol: the replica layout it needs and the hooks it
// plugs into every node. Adding a strategy never needs a change in this
// package: it implements Strategy and registers itself in package strategies.
type Strategy interface {
	// Name is the registered name ("passive-standby").
	Name() string
	// Replicas is how many hosts per protected fragment the strategy keeps
	// busy from the start: 1 for a primary alone, 2 for a primary with a
	// backup or secondary. Spares are added by the experiment.
	Replicas() int
	// InitialReceivers chooses, from a fragment's hosts (primary first),
	// those that receive its input at the start: the primary alone, or the
	// primary and its secondary for process pairs.
	InitialReceivers(hosts []string) []string
	// Hooks returns the behaviour of the node n. It is called once per node,
	// before Start.
	Hooks(n *Node) Hooks
}

// Hooks are a strategy's reactions to a node's events. Every method runs on
// the node's single thread; it acts through the node's methods and never
// blocks. Embed NopHooks to implement only what you need.
type Hooks interface {
	// Start runs once when the run begins (arm timers, set retention).
	Start()
	// Timer runs when a timer set with Node.SetTimer fires.
	Timer(name string)
	// Message sees every incoming message before the node handles it;
	// returning true means the hook consumed it and the node does nothing more.
	// m and its Tuples are only valid during the delivery (an Env may
	// recycle them, see Env): copy what is kept.
	Message(m *Message) bool
	// Output runs after the node emitted tuple t on its output stream.
	Output(t *Tuple)
	// PeerDown runs when the failure detector declares host dead.
	PeerDown(host string)
	// PeerUp runs when a host declared dead is seen alive again.
	PeerUp(host string)
	// RouteChanged runs after the node learned a new route for a fragment.
	RouteChanged(old, new Route)
}

// NopHooks implements Hooks doing nothing; embed it.
type NopHooks struct{}

func (NopHooks) Start()                  {}
func (NopHooks) Timer(string)            {}
func (NopHooks) Message(*Message) bool   { return false }
func (NopHooks) Output(*Tuple)           {}
func (NopHooks) PeerDown(string)         {}
func (NopHooks) PeerUp(string)           {}
func (NopHooks) RouteChanged(_, _ Route) {}

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
