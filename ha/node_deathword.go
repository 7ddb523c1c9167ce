package ha

import (
	"fmt"
	"slices"
	"time"
)

// A takeover needs either both sides' primaries to answer the probe (rule
// 8 of docs/reliability.md) or a majority view (rule 6). After crashes of
// half the deployment or more, no host sees a majority again, and when
// two adjacent fragments both lost their primary, the candidate of each
// hears only its far side: the other side's primary is dead, so it is not
// asked, and its silence proves nothing. Each waits for the other to take
// over first, for good: every fragment kept a live host, yet output never
// resumes.
//
// The rule: an elected host on a minority view whose probe could ask only
// one side (the other side's primary is declared dead) asks that side's
// primary whether it declared this fragment's primary dead too. The
// answer confirms the takeover when it comes from that side's primary,
// connected on its own far side (RouteFarCut not set), and names the
// primary dead. Why this is enough: the primary the host would replace is
// then cut off from a neighbour that is itself on the data path (it
// reaches the sources, or the sink), so even if the primary lives behind a
// partition it can neither get input from that side nor deliver through
// it; a primary that a neighbour still sees alive is left alone (the host
// waits, as before). Fencing by epoch leaves one primary after the heal,
// and a cut-off primary lets nothing be trimmed meanwhile (rule 5), so
// whoever serves after the heal finds the input it needs. The neighbour
// must also have declared dead every candidate the election passed over
// (a backup with the state), and then an empty restart on the minority
// view may go ahead too (MayRestartEmpty). Takeovers then
// ripple along the chain: the first fragment's candidate hears the
// source, the next one hears that new primary, and so on to the sink.

// deathWord is a node's question to its connected neighbour whether it
// declared the node's fragment's primary dead too.
type deathWord struct {
	prim      string        // the primary asked about
	need      []string      // it and the candidates the election passed over as dead
	epoch     uint64        // at this epoch of the fragment's route
	asking    bool          // the neighbours were asked
	askedAt   time.Duration // when
	confirmed bool          // a connected neighbour declared prim dead
	alive     bool          // its last answer since askedAt saw prim alive
}

// neighbourSawItDie reports whether a takeover on a minority view may go
// ahead because a connected neighbour primary declared this fragment's
// primary dead too (see above); otherwise it asks (again every
// ElectionSettle) and arms the election timer for the answer.
func (n *Node) neighbourSawItDie() bool {
	if n.planted.Has(PlantMinorityChainWaits) || n.probeSides == 0 || n.probeSides == 3 {
		return false // no neighbour to ask, or both asked: the probe decides
	}
	n.deathWordSync()
	if n.dw.confirmed {
		return true
	}
	n.askDeathWord()
	return false
}

// The same question, asked on a majority view, can hold a takeover back.
// A partition need not split the deployment into groups that see nothing
// of each other: it may cut only the links between a backup and its
// fragment's primary and upstream. The backup then sees a majority alive
// and its primary dead, while the primary serves on, acknowledged by the
// upstream and heard by the downstream; a takeover on that view fences it
// after the heal and asks the upstream for input it trimmed meanwhile (a
// gap under active standby, 90–200 inputs lost). The downstream's primary,
// connected on its own far side, still hearing the primary is the evidence
// that it serves: the backup waits, and asks again every ElectionSettle.
// After a real crash the neighbour declares the primary dead within about
// a heartbeat of the backup, and the takeover comes at most ElectionSettle
// later; only a probe that could ask one side waits so (a failure next to
// the fragment, or a partition).

// neighbourSeesPrimary reports whether the connected neighbour primary that
// a one-sided probe asked answered, since it was last asked, that it still
// sees this fragment's primary alive (see above).
func (n *Node) neighbourSeesPrimary() bool {
	if n.planted.Has(PlantViewOverNeighbour) || n.probeSides == 0 || n.probeSides == 3 {
		return false
	}
	n.deathWordSync()
	return n.dw.alive
}

// deathWordSync starts the question afresh when the fragment's route or
// the candidates the election passes over changed.
func (n *Node) deathWordSync() {
	r := n.routes[n.frag]
	need := []string{r.Primary}
	if s, ok := n.hooks.(Successor); ok {
		for _, h := range n.order(s) {
			if h == n.host {
				break
			}
			if n.down[h] && !slices.Contains(need, h) {
				need = append(need, h)
			}
		}
	}
	if n.dw.prim != r.Primary || n.dw.epoch != r.Epoch || !slices.Equal(n.dw.need, need) {
		n.dw = deathWord{prim: r.Primary, epoch: r.Epoch, need: need}
	}
}

// askDeathWord asks the connected neighbours' primaries of a one-sided
// probe for their view of this node's fragment, unless it did within
// ElectionSettle, and arms the election timer for the answer.
func (n *Node) askDeathWord() {
	now := n.env.Now()
	if n.dw.asking && now-n.dw.askedAt < ElectionSettle {
		return
	}
	if !n.dw.asking {
		n.Trace(Event{Kind: EvNote, Peer: n.dw.prim, Epoch: n.dw.epoch,
			Note: fmt.Sprintf("one-sided probe: asking the connected neighbour whether %v failed for it too", n.dw.need)})
	}
	n.dw.asking, n.dw.askedAt, n.dw.alive = true, now, false
	var ask []string
	if n.probeSides&1 != 0 {
		for p := range n.Inputs() {
			ask = append(ask, n.Upstream(p))
		}
	}
	if n.probeSides&2 != 0 {
		ask = append(ask, n.routes[n.DownstreamFrag()].Primary)
	}
	for i, h := range ask {
		if h != "" && !n.down[h] && !slices.Contains(ask[:i], h) {
			n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
		}
	}
	n.env.SetTimer(ElectionSettle, electTimer)
}

// deathWordAnswer takes a neighbour's view of this node's fragment's route
// while the node asks (neighbourSawItDie): it confirms when it comes from
// a neighbour side's primary connected on its far side and marks the
// asked primary dead (sendRouteView).
func (n *Node) deathWordAnswer(m *Message) {
	if !n.dw.asking || m.Type != RouteViewType || m.Route.Frag != n.frag || n.frag < 0 {
		return
	}
	if m.Route.Primary != n.dw.prim || m.Route.Epoch != n.dw.epoch || m.Level == RouteFarCut {
		return
	}
	switch m.Frag {
	case n.frag - 1:
		if !n.sidePrimary(m, true) {
			return
		}
	case n.DownstreamFrag():
		if !n.sidePrimary(m, false) {
			return
		}
	default:
		return
	}
	hosts := n.topo.Frags[n.frag].Hosts
	if i := slices.Index(hosts, n.dw.prim); i >= 0 && i < 64 && m.Seq&(1<<i) == 0 {
		n.dw.alive, n.dw.confirmed = true, false
		return
	}
	n.dw.alive = false
	for _, h := range n.dw.need {
		if i := slices.Index(hosts, h); i < 0 || i >= 64 || m.Seq&(1<<i) == 0 {
			return
		}
	}
	if !n.dw.confirmed {
		n.dw.confirmed = true
		n.Trace(Event{Kind: EvNote, Peer: m.From, Note: fmt.Sprintf("%s declared %v dead too", m.From, n.dw.need)})
	}
}

// deathConfirmed reports whether a connected neighbour declared dead this
// fragment's primary and every candidate the election passed over
// (neighbourSawItDie): an empty restart on a minority view may then go
// ahead, since no host with the state is reachable from the data path.
func (n *Node) deathConfirmed() bool {
	r := n.routes[n.frag]
	return !n.planted.Has(PlantMinorityChainWaits) && n.dw.confirmed && n.dw.prim == r.Primary && n.dw.epoch == r.Epoch
}
