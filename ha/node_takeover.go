package ha

import (
	"slices"
)

// ---- state ----

// Restart replaces the operator state with empty state and resets the
// output numbering and input filters (a fresh fragment on a spare). It
// builds the new operators first: when that fails it changes nothing.
func (n *Node) Restart() error {
	var ops []Operator
	if n.frag >= 0 && !n.IsSink() {
		var err error
		if ops, err = n.buildOps(); err != nil {
			return err
		}
		n.installOps(ops)
	}
	n.outNext = 0
	n.rep = [2]portRepair{}
	for p := range n.in {
		n.in[p] = inPort{seen: n.fencing}
		n.rep[p].fresh = n.fencing
	}
	n.out.Reset()
	n.forgetEnd(0)
	n.follow, n.pending, n.orderLog = nil, nil, nil
	n.merge, n.ended = [2][]Tuple{}, [2]bool{}
	return nil
}

// TakeoverOptions tune Node.TakeOver.
type TakeoverOptions struct {
	// ResetSeq announces that this node numbers its output afresh.
	ResetSeq bool
	// Receivers are the hosts that will receive the fragment's input; nil
	// means this node alone.
	Receivers []string
	// NoResume skips asking the upstreams to redirect and replay.
	NoResume bool
	// MinEpoch is the least epoch the takeover may take (0: none). A
	// strategy that orders takeovers centrally, in numbered rounds (a
	// global rollback's generation), passes the round, so that a later
	// round's takeover outranks an earlier round's that a host paused
	// meanwhile executes late: fencing by epoch then leaves the later one.
	MinEpoch uint64
}

// TakeOver makes this node the primary of its fragment at a new epoch,
// announces the route to every host and asks each upstream to replay what
// follows this node's input positions.
func (n *Node) TakeOver(o TakeoverOptions) {
	old := n.routes[n.frag]
	recv := o.Receivers
	if recv == nil {
		recv = []string{n.host}
	}
	r := Route{Frag: n.frag, Epoch: max(old.Epoch+1, o.MinEpoch), Primary: n.host, Receivers: recv, ResetSeq: o.ResetSeq, Resume: !o.NoResume}
	n.routes[n.frag] = r
	n.fenced = false
	if !n.planted.Has(PlantStaleHold) {
		// A hold waits for the resume of a downstream primary that this
		// node learned of while it served before: that resume was
		// answered by whoever served meanwhile. The downstream asks this
		// new primary again if it still needs a replay (its pending
		// resume follows the route announced below).
		n.awaiting = nil
	}
	n.catching, n.marked = uint8(1<<n.Inputs())-1, 0
	n.Trace(Event{Kind: EvTakeover, Peer: old.Primary, Frag: n.frag, Epoch: r.Epoch})
	n.AnnounceRoute()
	n.armEnd(true) // an output that ended already: its receivers may lack the end
	if !o.NoResume {
		for p := 0; p < n.Inputs(); p++ {
			n.requestResume(p, false)
		}
	}
	n.hooks.RouteChanged(old, r)
}

// AnnounceRoute broadcasts this node's current route for its fragment.
func (n *Node) AnnounceRoute() {
	r := n.routes[n.frag]
	n.Broadcast(&Message{Kind: KindRoute, Route: &r})
}

// SetReceivers changes who receives this fragment's input (the primary only) and announces it.
func (n *Node) SetReceivers(recv []string) {
	old := n.routes[n.frag]
	r := old
	r.Receivers = slices.Clone(recv)
	r.Version++ // not the epoch: see Route.Version
	if n.planted.Has(PlantReceiverChangeRaisesEpoch) {
		r.Version--
		r.Epoch++
	}
	// ResetSeq stays: it belongs to the epoch, and a host that learns
	// this epoch only from this later version must still reset its
	// duplicate filter for the new numbering.
	r.Resume = false
	n.routes[n.frag] = r
	n.AnnounceRoute()
	n.hooks.RouteChanged(old, r)
}

// Stale reports whether m comes from a host that is not the current primary
// of its fragment at the current epoch (always false with fencing off).
func (n *Node) Stale(m *Message) bool {
	if !n.fencing || m.Frag < 0 || m.Frag >= len(n.routes) {
		return false
	}
	r := n.routes[m.Frag]
	return m.Epoch < r.Epoch || (m.Kind == KindData && m.From != r.Primary)
}
