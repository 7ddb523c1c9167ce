package ha

import "slices"

// Route convergence after any heal. A takeover announces its route to
// every host, but a partition can keep that announcement from the hosts
// that need it, and nothing declares a fenced host dead: it is alive, it
// just no longer serves. So whatever the detector saw, every message that
// shows its sender works from a superseded route is answered with the
// current one (docs/reliability.md, "Routes converge after any heal"):
//
//   - a host that is no receiver of its fragment (fenced, or dropped from
//     the route) and still gets data from its upstream, or a resume
//     request from its downstream, tells the sender its fragment's route;
//   - a primary fenced by a newer route tells the hosts it exchanged data
//     with (its upstream primaries, its downstream receivers) who
//     superseded it;
//   - a route older than the receiver's, relayed or announced, is
//     answered with the receiver's (when the other side may believe it);
//   - a primary pushes its route to a host of a neighbouring fragment or
//     its own that it sees alive again, and re-sends a pending resume to
//     an upstream seen alive again;
//   - a receiver that learns a new primary of its upstream fragment asks
//     it to resend what follows its position: that answer ends the hold
//     a late-learned route leaves on the new primary, and fills what
//     fell between the old primary and the new.
//
// tellRoute limits each to one message per host and route per
// retellAfter, so a stale data path costs a few messages, not a flood.

// wrongReceiver answers data m that reached this node although it no
// longer receives its fragment's input: the sender missed the route that
// superseded this node.
func (n *Node) wrongReceiver(m *Message) {
	if n.planted.Has(PlantSilentFence) || n.frag < 0 || n.IsSink() || m.Frag != n.frag-1 {
		return
	}
	n.tellRoute(m.From, n.frag)
}

// resumeRefused answers a resume request this node does not serve: it no
// longer is its fragment's primary, or the request comes from an older
// epoch of the sender's fragment.
func (n *Node) resumeRefused(m *Message) {
	if n.planted.Has(PlantSilentFence) || m.Frag != n.DownstreamFrag() || n.frag < 0 || n.IsSink() {
		return
	}
	if n.Stale(m) {
		n.tellRoute(m.From, m.Frag)
		return
	}
	if !n.IsPrimary() {
		n.tellRoute(m.From, n.frag)
	}
}

// tellFenced tells the hosts this node exchanged data with as its
// fragment's primary the route that superseded it: the new primary may
// have taken over out of their sight (a partition), and they would keep
// sending to, or waiting for, this node.
func (n *Node) tellFenced() {
	if n.planted.Has(PlantSilentFence) {
		return
	}
	for p := range n.Inputs() {
		n.tellRoute(n.Upstream(p), n.frag)
	}
	for _, h := range n.Downstream() {
		n.tellRoute(h, n.frag)
	}
}

// peerBack runs when host is seen alive again. A primary pushes its route
// to host when host belongs to its fragment or a neighbouring one: either
// host learns a takeover made out of its sight, or it knows a newer route
// and answers with it (correctRoute), which fences this node. A pending
// resume to host is re-sent at once rather than at the next retry.
func (n *Node) peerBack(host string) {
	if n.planted.Has(PlantSilentFence) || n.frag < 0 || n.IsSink() {
		return
	}
	for p := range n.Inputs() {
		if n.rep[p].pending && n.Upstream(p) == host {
			n.sendResume(p)
		}
	}
	if !n.IsPrimary() {
		return
	}
	if f, ok := n.topo.FragOf(host); ok && (f == n.frag || f == n.frag-1 || f == n.DownstreamFrag()) {
		n.tellRoute(host, n.frag)
	}
}

// correctRoute answers route r, received from host from and older than
// this node's route old for the same fragment, with old, when from will
// believe it (validRoute: this node or from is a host of the fragment).
func (n *Node) correctRoute(r, old Route, from string) {
	if n.planted.Has(PlantSilentFence) {
		if from == r.Primary && (r.Epoch != old.Epoch || r.Primary != old.Primary) {
			n.tellRoute(from, r.Frag)
		}
		return
	}
	if r.Frag < 0 || r.Frag >= len(n.topo.Frags) || !old.supersedes(r, n.topo) {
		return
	}
	hosts := n.topo.Frags[r.Frag].Hosts
	if slices.Contains(hosts, n.host) || slices.Contains(hosts, from) {
		n.tellRoute(from, r.Frag)
	}
}

// newUpstream runs on a receiver that learned route r, which names a new
// primary of its upstream fragment: a pending resume goes to the new
// primary. When the route was told (passed on late, not announced at the
// takeover), the receiver also asks the new primary to resend what
// follows its position (a repair), introducing itself first when it is
// its own fragment's primary, so the new primary knows where to send: the
// new primary may hold its output for this node's resume, and what fell
// between the two primaries reached nobody. An announced route needs no
// such request: the new primary's own replay follows it.
func (n *Node) newUpstream(r Route, told bool) {
	for p := range n.Inputs() {
		switch {
		case n.rep[p].pending:
			n.sendResume(p)
		case !told || n.planted.Has(PlantNoUpstreamResume) || n.noRepair || n.Upstream(p) != r.Primary:
		default:
			if n.IsPrimary() && !n.IsSink() {
				n.tellRoute(r.Primary, n.frag)
			}
			n.requestResume(p, true)
		}
	}
}

// heardSide notes that a message from fragment frag arrived while this
// node probes before a takeover (node_elect.go). A probe is answered when
// every side it asked answered: a host that hears its downstream but not
// its upstream (a partition that left it beside the sink and away from
// the sources) waits, and the detector's settled view decides; one
// answer from either side used to be enough, and a host cut off from its
// input took over, to serve nothing and fence the primary that could. Only
// a side's primary speaks for it (sidePrimary): a spare of the upstream
// fragment stranded in the same island shows nothing about the data path.
func (n *Node) heardSide(m *Message) {
	if n.planted.Has(PlantSilentFence) {
		n.heard = true
		return
	}
	if !n.planted.Has(PlantStaleWordHeard) {
		// Only a timely route — the answer to the query, or a new
		// primary's announcement, within ElectionSettle of the question
		// — is word about the data path now. Data or an acknowledgement
		// may have waited in this node's inbox since before the
		// question, and an answer that comes later than the settle time
		// was given before the node's own pause ended: a host resuming
		// from a pause handles in one instant the answers to a probe it
		// sent before the pause and the messages its neighbours sent
		// before a partition cut them off with it, and took over on
		// them from a minority island (soak seed 31, active standby run
		// 2543). The view decides after the settle time anyway.
		asked := n.probeAt
		if n.rc.asking {
			asked = max(asked, n.rc.askedAt)
		}
		if m.Kind != KindRoute || n.env.Now()-asked > ElectionSettle {
			return
		}
	}
	switch frag := m.Frag; {
	case frag == n.frag-1 && n.sidePrimary(m, true):
		n.heardSides |= 1
	case frag == n.DownstreamFrag() && n.sidePrimary(m, false):
		n.heardSides |= 2
	}
	n.heard = n.probeAnswered()
}

// sidePrimary reports whether m, from a host of the upstream (up) or
// downstream fragment, comes from that side's primary as this node knows
// it, or from a host announcing itself that fragment's primary (a new
// primary's route).
func (n *Node) sidePrimary(m *Message, up bool) bool {
	if n.planted.Has(PlantOneSidedProbe) {
		return true
	}
	if m.Kind == KindRoute && m.Level == RouteFarCut {
		return false // farSideCut
	}
	if m.Kind == KindRoute && m.Route != nil && m.Route.Frag == m.Frag && m.Route.Primary == m.From {
		return true
	}
	if !up {
		return m.From == n.routes[n.DownstreamFrag()].Primary
	}
	for p := range n.Inputs() {
		if m.From == n.Upstream(p) {
			return true
		}
	}
	return false
}

// RouteFarCut is the Level of a route answer whose sender is cut off on its
// far side from the asker (farSideCut).
const RouteFarCut uint8 = 1

// farSideCut reports whether this node, a primary, is cut off on the far
// side from host: asked by a host of its downstream fragment, it sees
// every upstream primary (or source) dead; asked by a host of its upstream
// fragment, it sees its downstream primary dead. Its answer to a probe
// then shows nothing about the asker's data path: a backup in an island
// with its upstream and downstream primaries but neither the sources nor
// the sink (a partition that cut a whole stretch of the pipeline off)
// would take over to serve nothing, and after the heal its newer epoch
// would fence the primary that kept serving and ask for input trimmed
// for it meanwhile.
func (n *Node) farSideCut(host string) bool {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() || len(n.down) == 0 {
		return false
	}
	f, ok := n.topo.FragOf(host)
	if !ok {
		return false
	}
	switch f {
	case n.DownstreamFrag():
		for p := range n.Inputs() {
			if up := n.Upstream(p); up != "" && !n.down[up] {
				return false
			}
		}
		return true
	case n.frag - 1:
		d := n.routes[n.DownstreamFrag()].Primary
		return d == "" || n.down[d]
	}
	return false
}
