package ha

import (
	"slices"
	"time"
)

// Routes confirmed by their primary. A route is the fencing token of a
// fragment: believed, it makes a primary stop serving and every
// neighbour redirect. One message's word is too little for the two kinds
// of route a damaged, replayed or forged message would use to stop a job
// for good (docs/cluster.md, "Forged routes"): a route that would fence
// its receiver, and one that raises a fragment's epoch by more than one
// over what its receiver knows. Such a route is not applied when it
// arrives; its receiver asks the primary the route names for its own view
// of the fragment (a route query) and applies a route only when that
// primary itself sends it. A legitimate takeover costs its fenced
// primary one round trip more; a forged route costs one query, and the
// claimed primary's answer, a route of its real view, shows the claim
// false. The same route told by a second host is believed too: a host cut
// off from its fragment's new primary alone learns it from both of its
// neighbours, and one forger is one host. Routes that name this host primary are never believed from
// another host: only this host makes them.

// claim is a route waiting for its primary's confirmation, and when its
// primary was last asked.
type claim struct {
	r     Route
	asked time.Duration
	from  string // the first host that told it
}

// confirmed reports whether route r, received from host from and newer
// than old, this node's route for the fragment, may be applied now. When
// it may not yet, it asks r's primary (at most once per retellAfter and
// claim) and returns false.
func (n *Node) confirmed(r, old Route, from string) bool {
	if n.planted.Has(PlantTrustRoutes) {
		return true
	}
	if r.Frag == n.frag && r.Primary == n.host {
		n.Trace(Event{Kind: EvNote, Peer: from, Frag: r.Frag, Epoch: r.Epoch,
			Note: "route ignored: it names this host primary in a route this host never made"})
		return false
	}
	fences := r.Frag == n.frag && old.Primary == n.host && !n.fenced && !slices.Contains(r.Receivers, n.host)
	jumps := r.Epoch > old.Epoch+1
	if !fences && !jumps {
		return true
	}
	c, pending := n.unconfirmed[r.Frag]
	if pending && from == r.Primary && c.r.Primary == r.Primary {
		// The named primary's own word: its route is the fragment's,
		// whatever the claim said.
		delete(n.unconfirmed, r.Frag)
		return true
	}
	if pending && c.r.Primary == r.Primary && c.r.Epoch == r.Epoch && c.from != from {
		// A second host's word for the same route: a partition may keep
		// the named primary from answering (a host cut off from its own
		// fragment only), but both neighbours then tell it the route.
		delete(n.unconfirmed, r.Frag)
		return true
	}
	now := n.env.Now()
	if pending && c.r.Primary == r.Primary && c.r.Epoch >= r.Epoch && now-c.asked < retellAfter {
		return false // asked already
	}
	if n.unconfirmed == nil {
		n.unconfirmed = map[int]claim{}
	}
	first := from
	if pending && c.r.Primary == r.Primary && c.r.Epoch == r.Epoch {
		first = c.from
	}
	n.unconfirmed[r.Frag] = claim{r: r, asked: now, from: first}
	why := "epoch jump"
	if fences {
		why = "it would fence this host"
	}
	n.Trace(Event{Kind: EvNote, Peer: from, Frag: r.Frag, Epoch: r.Epoch,
		Note: "route held until " + r.Primary + " confirms it (" + why + ")"})
	n.Send(r.Primary, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(r.Frag) + 1})
	return false
}
