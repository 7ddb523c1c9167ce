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
// The rule: an elected host that sees exactly half of the deployment
// alive (no strict majority anywhere; with fewer, a side holding the
// state's holders may be the larger one, and the host waits, as before),
// whose probe could ask only
// its downstream side (its upstream primary is declared dead) asks that
// side's primary whether it declared this fragment's primary, and every
// candidate the election passed over, dead too. The answer confirms the
// takeover (and an empty restart on that minority view, MayRestartEmpty)
// when it comes from the downstream primary, connected on its own far side
// (RouteFarCut not set: it reaches the sink, or its own downstream does),
// and names them dead. Why this is enough: the hosts replaced are then cut
// off from the side that leads to the sink, so even alive behind a
// partition they can deliver nothing; a primary that the neighbour still
// sees alive is left alone (the host waits, as before). Fencing by epoch
// leaves one primary after the heal, and a cut-off primary lets nothing be
// trimmed meanwhile (rule 5), so whoever serves after the heal finds the
// input it needs. Only the downstream side may speak: a source in an
// island with the candidate reaches no sink, and the primary with the
// state, serving the majority, would be fenced after the heal by an empty
// restart made in the island. Takeovers then ripple back from the sink:
// the last fragment's candidate hears the sink, the one before hears that
// new primary, and so on; a candidate whose upstream primary lives waits
// for its downstream to get one, then hears both sides (rule 8).

// deathWord is a node's question to its connected neighbour whether it
// declared the node's fragment's primary dead too.
type deathWord struct {
	prim      string        // the primary asked about
	need      []string      // it and the candidates the election passed over as dead
	epoch     uint64        // at this epoch of the fragment's route
	asking    bool          // the neighbours were asked
	askedAt   time.Duration // when
	confirmed bool          // the downstream primary declared them all dead
	alive     bool          // a side's primary answered, since askedAt, that prim lives
	// checkedAt is when the hosts of need were asked themselves, once the
	// downstream's word came (deathConfirmed); refuted says one answered
	checkedAt time.Duration
	refuted   bool
}

// neighbourSawItDie reports whether a takeover on a minority view may go
// ahead because the connected downstream primary declared this fragment's
// primary and the candidates passed over dead too (see above); otherwise
// it asks (askDeathWord).
func (n *Node) neighbourSawItDie() bool {
	if n.planted.Has(PlantMinorityChainWaits) || n.probeSides != 2 || !n.seesHalf() {
		return false // only the downstream side may speak, on exactly half the deployment (see above); both asked: the probe decides
	}
	if n.deathConfirmed() {
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
// gap under active standby, 90–200 inputs lost). A side's primary,
// connected on its own far side, still hearing the primary is the evidence
// that it serves: the backup waits, and asks again every ElectionSettle.
// After a real crash the neighbour declares the primary dead within about
// a heartbeat of the backup, and the takeover comes at most ElectionSettle
// later; only a probe that could ask one side waits so (a failure next to
// the fragment, or a partition).

// neighbourSeesPrimary reports whether the connected side's primary that
// a one-sided probe asked answered, since it was last asked, that it still
// sees this fragment's primary alive (see above).
func (n *Node) neighbourSeesPrimary() bool {
	if n.planted.Has(PlantViewOverNeighbour) || n.probeSides == 0 || n.probeSides == 3 {
		return false
	}
	n.deathWordSync()
	return n.dw.alive
}

// wordSaysAlive reports whether the last answer to this node's question
// about its fragment's primary (askDeathWord) said it lives: a probe
// confirmed later by both sides does not outweigh it (elect). A primary
// cut off from its backup and from a neighbour that heals first was taken
// over from, with the backup's old checkpoint, while the other neighbour
// had said all along that it served (passive standby, soak seed 47 run
// 657: 140 inputs lost, output stalled).
func (n *Node) wordSaysAlive() bool {
	if n.planted.Has(PlantAliveWordForgotten) {
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

// askDeathWord asks the primaries of the fragment's sides that this node
// sees alive (its upstream primaries and its downstream primary) for their
// view of this node's fragment: whether they declared its primary and the
// candidates the election passed over dead. It asks again every
// ElectionSettle, not once the downstream confirmed, and arms the election
// timer for the answer. An empty restart on a minority view asks too
// (MayRestartEmpty): both sides may have answered the probe.
func (n *Node) askDeathWord() {
	n.deathWordSync()
	now := n.env.Now()
	if n.dw.refuted && now-n.dw.checkedAt >= ElectionSettle {
		n.dw = deathWord{prim: n.dw.prim, epoch: n.dw.epoch, need: n.dw.need} // ask afresh
	}
	if n.dw.confirmed || n.dw.asking && now-n.dw.askedAt < ElectionSettle {
		return
	}
	var ask []string
	for p := range n.Inputs() {
		ask = append(ask, n.Upstream(p))
	}
	ask = append(ask, n.routes[n.DownstreamFrag()].Primary)
	ask = slices.DeleteFunc(ask, func(h string) bool { return h == "" || n.down[h] })
	if len(ask) == 0 {
		return
	}
	if !n.dw.asking {
		n.Trace(Event{Kind: EvNote, Peer: n.dw.prim, Epoch: n.dw.epoch,
			Note: fmt.Sprintf("asking the connected neighbours whether %v failed for them too", n.dw.need)})
	}
	n.dw.asking, n.dw.askedAt, n.dw.alive = true, now, false
	for i, h := range ask {
		if !slices.Contains(ask[:i], h) {
			n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
		}
	}
	n.env.SetTimer(ElectionSettle, electTimer)
}

// deathWordAnswer takes a neighbour's view of this node's fragment's route
// while the node asks (askDeathWord), from a side's primary connected on
// its far side: one that sees the primary alive holds a one-sided probe
// back (neighbourSeesPrimary); the downstream primary's that marks the
// asked hosts dead confirms (sendRouteView).
func (n *Node) deathWordAnswer(m *Message) {
	if !n.dw.asking || m.Type != RouteViewType || m.Route.Frag != n.frag || n.frag < 0 {
		return
	}
	if m.Route.Primary != n.dw.prim || m.Route.Epoch != n.dw.epoch || m.Level == RouteFarCut {
		return
	}
	down := m.Frag == n.DownstreamFrag() && n.sidePrimary(m, false)
	if !down && (m.Frag != n.frag-1 || !n.sidePrimary(m, true)) {
		return
	}
	hosts := n.topo.Frags[n.frag].Hosts
	if i := slices.Index(hosts, n.dw.prim); i >= 0 && i < 64 && m.Seq&(1<<i) == 0 {
		n.dw.alive, n.dw.confirmed = true, false
		return
	}
	n.dw.alive = false
	if !down || n.dw.confirmed {
		return
	}
	for _, h := range n.dw.need {
		if i := slices.Index(hosts, h); i < 0 || i >= 64 || m.Seq&(1<<i) == 0 {
			return
		}
	}
	n.dw.confirmed, n.dw.checkedAt = true, n.env.Now()
	n.Trace(Event{Kind: EvNote, Peer: m.From, Note: fmt.Sprintf("%s declared %v dead too: asking them before taking over on its word", m.From, n.dw.need)})
	// The neighbour's view may be as old as the partition that just
	// healed (its detector says nothing until a heartbeat arrives): the
	// hosts themselves answer if they live, within a round trip.
	for _, h := range n.dw.need {
		n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
	}
	n.env.SetTimer(ElectionSettle, electTimer)
}

// deathWordRefuted notes a message from a host the downstream declared
// dead while this node checks with it (deathWordAnswer): it lives, and the
// word counts for nothing.
func (n *Node) deathWordRefuted(m *Message) {
	if n.dw.confirmed && !n.dw.refuted && slices.Contains(n.dw.need, m.From) {
		n.dw.refuted = true
		n.Trace(Event{Kind: EvNote, Peer: m.From, Note: fmt.Sprintf("%s answered: it lives, no takeover on the neighbour's word", m.From)})
	}
}

// deathConfirmed reports whether the connected downstream primary declared
// dead this fragment's primary and every candidate the election passed
// over (askDeathWord): a takeover or an empty restart on a minority view
// may then go ahead, since no host with the state reaches the sink.
func (n *Node) deathConfirmed() bool {
	r := n.routes[n.frag]
	return !n.planted.Has(PlantMinorityChainWaits) && n.seesHalf() && n.dw.confirmed && !n.dw.refuted && n.dw.prim == r.Primary &&
		n.dw.epoch == r.Epoch && n.env.Now()-n.dw.checkedAt >= ElectionSettle
}

// awaitsDeathWord reports whether this node waits for its downstream
// primary's answer (askDeathWord): the election has nothing to ask
// meanwhile (emptySettling).
func (n *Node) awaitsDeathWord() bool {
	now := n.env.Now()
	return n.dw.asking && !n.dw.confirmed && now-n.dw.askedAt < ElectionSettle ||
		n.dw.confirmed && !n.dw.refuted && now-n.dw.checkedAt < ElectionSettle
}
