package ha

import (
	"slices"
	"time"
)

// elect runs the election for the node's fragment (see Successor).
func (n *Node) elect() {
	s, ok := n.hooks.(Successor)
	if !ok || len(n.down) == 0 || n.frag < 0 || n.IsSink() {
		return
	}
	r := n.routes[n.frag]
	if r.Primary == n.host || !n.down[r.Primary] {
		n.cw = candWait{}
		n.recheckOff()
		n.askPrimaryOff()
		return
	}
	order := n.order(s)
	n.passIdleCandidates(order) // node_candwait.go
	if n.electedIn(order) != n.host || !n.Connected() {
		n.probing, n.heard = false, false
		n.recheckOff()
		return
	}
	if n.emptySettling() {
		return // node_cutoff.go: the settle timer elects again
	}
	if need, bounded := n.recheckNeed(order); len(need) > 0 && !n.recheckDue(need, bounded) {
		return // node_recheck.go
	}
	if !n.heard && !n.probing {
		n.probe()
	}
	if !n.heard {
		if n.env.Now()-n.probeAt < ElectionSettle {
			return
		}
		if n.env.Now()-n.probeAt > 2*ElectionSettle && !n.planted.Has(PlantStaleWordHeard) {
			// The settle timer fired late: this node was paused (or its
			// CPU far behind), and the detector's events of the meantime
			// still wait in its inbox behind the timer. Neither the probe
			// nor the view is current: probe again (heardSide).
			n.probing = false
			n.probe()
			return
		}
		// A side asked was declared dead meanwhile, or the connected
		// neighbour of a one-sided probe still hears the primary: it
		// serves (node_deathword.go); or no side asked answered at all:
		// this node is far likelier cut off, with its detector still
		// declaring the hosts it lost one by one, than every probe lost
		// (passive standby, soak seed 83 run 262: A.1, alone in a
		// partition, took over on a view that still counted six of ten
		// hosts alive). Probe again.
		if n.probeShrank() || n.neighbourSeesPrimary() || n.heardNoSide() {
			n.probe()
			return
		}
		// No answer within the settle time, yet the detector still sees
		// both sides alive: the probes were lost, the view decides — a
		// majority view (viewMayElect).
		if !n.viewMayElect() && !n.neighbourSawItDie() {
			n.probing = false
			return
		}
	}
	if n.heard && n.wordSaysAlive() {
		// A side's primary last said the primary lives: a probe answered
		// from both sides since (a heal brought the other side back)
		// shows the data path, not that the primary died. Ask again.
		n.probing, n.heard = false, false
		n.askDeathWord()
		return
	}
	if n.awaitsPrimary() {
		return // node_askprimary.go
	}
	n.probing, n.heard = false, false
	n.recheckOff()
	s.TakeOver()
}

// probe asks the primaries on both sides of the fragment for their route
// before this node takes over: a message from each side it asked that
// arrives afterwards shows it is not the one cut off (see Connected and
// heardSide) and lets it take over at once; otherwise it waits
// ElectionSettle, by when a node cut off from everybody has declared
// every other host dead, and its view decides (viewMayElect).
func (n *Node) probe() {
	n.probing, n.probeAt = true, n.env.Now()
	if !n.rc.asking {
		n.heardSides = 0 // a re-check's answers count as the probe's (recheckDue)
	}
	n.probeSides = n.probeSidesNow()
	for i, h := range []string{n.Upstream(0), n.routes[n.DownstreamFrag()].Primary} {
		if n.probeSides&(1<<i) != 0 && n.heardSides&(1<<i) == 0 {
			n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Level: RouteProbeLevel})
		}
	}
	n.heard = n.probeAnswered()
	if !n.heard && (n.probeSides == 1 || n.probeSides == 2) && !n.planted.Has(PlantViewOverNeighbour) {
		n.askDeathWord() // node_deathword.go
	}
	n.env.SetTimer(ElectionSettle, electTimer)
}

// probeSidesNow is the sides of the fragment a probe now would ask: bit 0
// the upstream primaries (every input's), bit 1 the downstream one, each
// unless declared dead.
func (n *Node) probeSidesNow() uint8 {
	var sides uint8
	up := true
	for p := range n.Inputs() {
		if h := n.Upstream(p); h == "" || n.down[h] {
			// A fragment with two inputs cut from one of them cannot
			// serve from here: its upstream side counts as cut
			// (soak seed 47, run 961: a join's backup took over beside
			// one source while the primary served with the other).
			up = up && n.planted.Has(PlantOneInputProbe) && p > 0
		}
	}
	if up {
		sides |= 1
	}
	if d := n.routes[n.DownstreamFrag()].Primary; d != "" && !n.down[d] {
		sides |= 2
	}
	return sides
}

// probeShrank reports whether a side the probe asked was declared dead
// since, leaving one: the probe is then one-sided, and its connected
// neighbour's view of the primary is asked for (node_deathword.go).
func (n *Node) probeShrank() bool {
	if n.planted.Has(PlantViewOverNeighbour) {
		return false
	}
	now := n.probeSidesNow()
	return n.probeSides == 3 && (now == 1 || now == 2)
}

// heardNoSide reports whether no side the probe asked has answered, or
// there was no side to ask: with both neighbours' primaries declared dead
// the host cannot tell its own cut from theirs, and waits until a side has
// a primary again (a neighbour's successor announces itself).
func (n *Node) heardNoSide() bool {
	return !n.planted.Has(PlantSilenceDecides) && n.heardSides&n.probeSides == 0
}

// probeAnswered reports whether the probe (or a re-check) has heard from
// both sides of the fragment. A side whose primary this node declared
// dead was not asked, and its silence proves nothing: a partition that
// cut this node off from its upstream looks just like the crash of the
// upstream primary. An answer from the downstream alone — a host in an
// island beside its downstream, its primary serving on the other side —
// then must not confirm the takeover: the host waits for word from the
// upstream side (the upstream's new primary announces itself), and after
// ElectionSettle its view decides, a majority view (viewMayElect). After
// a real crash of the upstream primary the takeover comes at most
// ElectionSettle later.
func (n *Node) probeAnswered() bool {
	want := uint8(3)
	if n.planted.Has(PlantOneSidedProbe) {
		want = n.probeSides
	}
	if want == 3 && n.probeSidesNow()&1 == 0 && !n.planted.Has(PlantOneInputProbe) {
		return false // an input's primary is declared dead: word from the other input shows nothing
	}
	return n.probeSides != 0 && n.heardSides&want == want
}

// electTimer re-runs the election once the settle time of a probe is over.
const electTimer = "ha.elect"

// ElectionSettle is how long a node elected to take over waits for
// an answer to its probe before the failure detector's view decides: a
// node cut off from everybody declares every other host dead within
// about one heartbeat.
const ElectionSettle = 100 * time.Millisecond

// Connected reports whether the node sees a live host upstream and one
// downstream of its fragment. A node that does not is cut off itself,
// most likely — a partition isolating it makes it declare every other
// host dead —, so it neither takes over (that would fence a primary that
// still serves, to serve nobody) nor, as a primary, should it change its
// fragment's route: it acts once it sees both sides again.
func (n *Node) Connected() bool {
	up := n.topo.Sources
	if n.frag > 0 {
		up = n.topo.Frags[n.frag-1].Hosts
	}
	down := []string{n.topo.Sink}
	if n.frag+1 < len(n.topo.Frags) {
		down = n.topo.Frags[n.frag+1].Hosts
	}
	alive := func(h string) bool { return !n.down[h] }
	return slices.ContainsFunc(up, alive) && slices.ContainsFunc(down, alive)
}

// SeesNeighbours reports whether the node sees alive the hosts it
// exchanges data with: its upstream primaries (or sources) and its
// downstream primary (or the sink). A primary that does not is cut off
// from its data path, even if it still sees other hosts of the
// neighbouring fragments: a change of its route (a replaced secondary)
// would raise its epoch above that of the host taking over from it
// meanwhile, and fence the host that serves.
func (n *Node) SeesNeighbours() bool {
	for p := range n.Inputs() {
		if up := n.Upstream(p); up == "" || n.down[up] {
			return false
		}
	}
	d := n.routes[n.DownstreamFrag()].Primary
	return d != "" && !n.down[d]
}

// Ring lists the hosts of the node's fragment in topology order, starting
// with the one after the current primary and ending with the primary: the
// default takeover order. Starting after the primary, not at the first
// host, keeps a superseded primary that still believes its successor dead
// (a partition between the two alone) from taking the fragment back: it
// waits for the hosts after its successor, which see the successor alive.
func (n *Node) Ring() []string {
	if n.frag < 0 || n.IsSink() {
		return nil
	}
	hosts := n.topo.Frags[n.frag].Hosts
	i := slices.Index(hosts, n.routes[n.frag].Primary) + 1 // 0 when not found
	return append(slices.Clone(hosts[i:]), hosts[:i]...)
}

// order is the takeover order as this node sees it.
func (n *Node) order(s Successor) []string {
	if order := s.Successors(); order != nil {
		return order
	}
	return n.Ring()
}

// electedIn is the first host of order that is neither the primary nor
// declared dead.
func (n *Node) electedIn(order []string) string {
	prim := n.routes[n.frag].Primary
	for _, h := range order {
		if h != prim && !n.down[h] && !n.cw.skips(h) {
			return h
		}
	}
	return ""
}
