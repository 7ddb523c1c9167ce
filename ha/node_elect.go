package ha

// Successor is an optional capability of Hooks: the strategy's part in
// the one election every node runs. Whenever a node learns something that
// may change who should serve its fragment — a host declared dead or seen
// alive again, a new route — it re-evaluates: when the fragment's primary
// is declared dead, the first host in takeover order that is not declared
// dead takes over, and if that is this node, the node calls TakeOver. A
// candidate that fails before it takes over is skipped as soon as it is
// declared dead, so a fragment with a live host always ends with a
// primary (docs/reliability.md). Two hosts that both believe themselves
// elected (different views) are resolved by epochs and fencing.
type Successor interface {
	// Successors lists the hosts of the node's fragment in the order in
	// which they take over from a failed primary, as this node sees it
	// (the host with the state first). The election skips the failed
	// primary and every host declared dead. nil means the topology's
	// order.
	Successors() []string
	// TakeOver makes this node the fragment's primary: it restores or
	// rebuilds state as the strategy requires and calls Node.TakeOver.
	TakeOver()
}

// elect runs the election for the node's fragment (see Successor).
func (n *Node) elect() {
	s, ok := n.hooks.(Successor)
	if !ok || len(n.down) == 0 || n.frag < 0 || n.IsSink() {
		return
	}
	r := n.routes[n.frag]
	if r.Primary == n.host || !n.down[r.Primary] {
		return
	}
	if n.elected(s) == n.host {
		s.TakeOver()
	}
}

// Elected returns the host that should take over the node's fragment
// from its failed primary, from this node's view, or "" when the primary
// is not declared dead, no host is left, or the strategy never takes over.
func (n *Node) Elected() string {
	s, ok := n.hooks.(Successor)
	if !ok || n.frag < 0 || n.IsSink() || !n.down[n.routes[n.frag].Primary] {
		return ""
	}
	return n.elected(s)
}

func (n *Node) elected(s Successor) string {
	order := s.Successors()
	if order == nil {
		order = n.topo.Frags[n.frag].Hosts
	}
	prim := n.routes[n.frag].Primary
	for _, h := range order {
		if h != prim && !n.down[h] {
			return h
		}
	}
	return ""
}
