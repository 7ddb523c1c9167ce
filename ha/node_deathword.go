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
	confirmed bool          // a connected neighbour declared prim dead
	// checkedAt is when the hosts of need were asked themselves, once the
	// neighbour's word came (deathConfirmed); refuted says one answered
	checkedAt time.Duration
	refuted   bool
}

// neighbourSawItDie reports whether a takeover on a minority view may go
// ahead because the connected downstream primary declared this fragment's
// primary and the candidates passed over dead too (see above); otherwise
// it asks (askDeathWord).
func (n *Node) neighbourSawItDie() bool {
	if n.planted.Has(PlantMinorityChainWaits) || n.probeSides != 2 || !n.seesHalf() {
		return false // only the downstream side may speak (see above); both asked: the probe decides
	}
	if n.deathConfirmed() {
		return true
	}
	if !n.awaitsDeathWord() {
		n.askDeathWord()
	}
	return false
}

// askDeathWord asks the downstream primary, when this node sees it alive,
// whether it declared this fragment's primary and the candidates the
// election passed over dead (again every ElectionSettle), and arms the
// election timer for the answer. An empty restart on a minority view asks
// it too (MayRestartEmpty): both sides may have answered the probe.
func (n *Node) askDeathWord() {
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
	d := n.routes[n.DownstreamFrag()].Primary
	now := n.env.Now()
	if n.dw.refuted && now-n.dw.checkedAt >= ElectionSettle {
		n.dw = deathWord{prim: r.Primary, epoch: r.Epoch, need: need} // ask afresh
	}
	if n.dw.confirmed || d == "" || n.down[d] || n.dw.asking && now-n.dw.askedAt < ElectionSettle {
		return
	}
	if !n.dw.asking {
		n.Trace(Event{Kind: EvNote, Peer: r.Primary, Epoch: r.Epoch,
			Note: fmt.Sprintf("minority view: asking the connected neighbour whether %v failed for it too", need)})
	}
	n.dw.asking, n.dw.askedAt = true, now
	n.Send(d, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
	n.env.SetTimer(ElectionSettle, electTimer)
}

// deathWordAnswer takes a neighbour's view of this node's fragment's route
// while the node asks (askDeathWord): it confirms when it comes from the
// downstream primary connected on its far side and marks the asked hosts
// dead (sendRouteView).
func (n *Node) deathWordAnswer(m *Message) {
	if !n.dw.asking || n.dw.confirmed || m.Type != RouteViewType || m.Route.Frag != n.frag || n.frag < 0 {
		return
	}
	if m.Route.Primary != n.dw.prim || m.Route.Epoch != n.dw.epoch || m.Level == RouteFarCut {
		return
	}
	if m.Frag != n.DownstreamFrag() || !n.sidePrimary(m, false) {
		return
	}
	hosts := n.topo.Frags[n.frag].Hosts
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
