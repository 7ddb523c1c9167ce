package ha

import "time"

// A primary cut off from its downstream may be on the minority side of a
// partition that split its fragment: a host on the other side can take
// over from it (it sees the downstream and an upstream host, and this
// primary dead) and will ask the upstream to replay from its own, older,
// position once the partition heals. Whatever this primary acknowledges
// meanwhile — its input checkpointed to a backup it recruited on its
// side, processed, passed on — lets the upstream trim exactly the tuples
// that successor needs: a gap under strategies that promise none. So
// while it is cut off, a primary sends its upstream no acknowledgement
// (docs/reliability.md, rule 5); its strategy's later acknowledgements,
// cumulative, release the trim once it sees its downstream again. The
// upstream retains more meanwhile; nothing else changes.

// CutOff reports whether this node, a primary, sees its downstream
// fragment's primary declared dead. (Its own fragment's majority is no
// test: a fragment of two hosts that lost one would never let its
// upstream trim again.)
func (n *Node) CutOff() bool {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() || len(n.down) == 0 {
		return false
	}
	d := n.routes[n.DownstreamFrag()].Primary
	return d == "" || n.down[d]
}

// A primary with several inputs may be cut off from one of them only (a
// join whose fragment a partition split between its two sources): it
// serves on with the other, and a host of its fragment on the far side,
// which hears that input's primary and the downstream, takes over. After
// the heal the successor's epoch fences this primary and asks every
// upstream to replay from the successor's own positions — including the
// upstream this primary kept hearing, and which trimmed on its
// acknowledgements meanwhile (a gap under active standby: 180–200 inputs
// lost). So while any input's primary is declared dead, a primary sends no
// acknowledgement upstream either, as when its downstream is: cumulative,
// the next one after the cut releases the trim of every

// acknowledgement withheld meanwhile. Once every input's primary is seen
// alive again the acknowledgements wait ElectionSettle more: the
// successor's route is on its way, and an upstream that has it drops this
// primary's acknowledgements as stale.

// inputCut reports whether this node, a primary, sees the primary of one
// of its inputs declared dead (or knows none).
func (n *Node) inputCut() bool {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() || n.planted.Has(PlantAckWhileInputCut) {
		return false
	}
	return n.inputDown()
}

// inputDown reports whether this node sees the primary of one of its
// inputs declared dead, or knows none.
func (n *Node) inputDown() bool {
	if len(n.down) == 0 {
		return false
	}
	for p := range n.Inputs() {
		if up := n.Upstream(p); up == "" || n.down[up] {
			return true
		}
	}
	return false
}

// The detector declares the hosts on the other side of a partition dead
// one by one, over about a heartbeat: a primary that just lost its backup
// may not yet see that it lost its downstream too, and an acknowledgement
// it sends then (its new backup's first checkpoint, say) is one a
// cut-off primary must not send. So after any host is declared dead the
// view counts as settling for ElectionSettle, and acknowledgements wait
// meanwhile like a cut-off primary's.

// ViewSettled reports whether ElectionSettle passed since the detector
// last declared a host dead. A strategy defers route changes that depend
// on who is dead (dropping a secondary) until it has.
// It also waits ElectionSettle after the view regained a majority of
// the deployment (node_minority.go).
func (n *Node) ViewSettled() bool {
	return n.SettleLeft() == 0
}

// SettleLeft is how long until ViewSettled turns true (0 when it is).
func (n *Node) SettleLeft() time.Duration {
	left := time.Duration(0)
	if n.downSeen && !n.planted.Has(PlantTrimWhileCutOff) {
		left = max(left, ElectionSettle-(n.env.Now()-n.downAt))
	}
	if n.inputBack && !n.planted.Has(PlantAckWhileInputCut) {
		left = max(left, ElectionSettle-(n.env.Now()-n.inputBackAt))
	}
	return max(left, n.regainLeft())
}

// withholdsAck reports whether m, about to be sent to host to, is an
// acknowledgement to this node's upstream that a cut-off primary, or one
// whose view is still settling or a minority of the deployment, must
// not send.
func (n *Node) withholdsAck(to string, m *Message) bool {
	if m.Kind != KindAck || n.planted.Has(PlantTrimWhileCutOff) || (!n.CutOff() && !n.inputCut() && n.ViewSettled() && !n.minorityHold()) {
		return false
	}
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() {
		return false
	}
	f, ok := n.topo.FragOf(to)
	if !ok || f != n.frag-1 {
		return false
	}
	n.Trace(Event{Kind: EvNote, Peer: to, Seq: m.Seq, N: int64(m.Stream),
		Note: "acknowledgement withheld: this primary is cut off from its downstream, or its view is settling"})
	return true
}

// A host that would restart its fragment with empty state — no replica
// with the state is alive in its view — throws that state away for good:
// its route, at a newer epoch, fences the primary that holds it. When the
// host sees most of the deployment dead, the likelier cause is a
// partition that cut it off, with the state's holders serving on the
// other side, than a crash of every one of them. So an empty restart
// first lets the view settle for ElectionSettle (the detector declares
// the hosts of the other side dead one by one), then happens only while
// the host sees a majority of the deployment alive; otherwise it waits,
// and the next detector event elects again. After real crashes the
// restart comes ElectionSettle later than before, and no better choice
// exists.

// emptyEpisode is how long a wait for an empty restart counts as the same
// episode: a request after it starts a new settle period.
const emptyEpisode = 10 * ElectionSettle

// SeesMajority reports whether the node sees a strict majority of the
// deployment's hosts (itself included) alive.
func (n *Node) SeesMajority() bool {
	alive, all := n.aliveOfAll()
	return 2*alive > all
}

// seesHalf reports whether the node sees exactly half of the deployment's
// hosts (itself included) alive: no side of a split can see more than the
// other, and the downstream's word decides (node_deathword.go).
func (n *Node) seesHalf() bool {
	alive, all := n.aliveOfAll()
	return 2*alive == all
}

// aliveOfAll counts the deployment's hosts and those the node sees alive.
// Counted in place (Topology.Hosts allocates): a primary asks this before
// every acknowledgement it sends upstream (minorityHold).
func (n *Node) aliveOfAll() (alive, all int) {
	count := func(h string) {
		all++
		if !n.down[h] {
			alive++
		}
	}
	for _, h := range n.topo.Sources {
		count(h)
	}
	for _, f := range n.topo.Frags {
		for _, h := range f.Hosts {
			count(h)
		}
	}
	count(n.topo.Sink)
	return alive, all
}

// MayRestartEmpty reports whether the node may restart its fragment
// with empty state now; a strategy asks it before such a takeover, and
// gives the takeover up when it may not (the election runs again).
func (n *Node) MayRestartEmpty() bool {
	if n.planted.Has(PlantMinorityRestart) {
		return true
	}
	now := n.env.Now()
	if !n.emptyAsked || now-n.emptyAt > emptyEpisode {
		n.emptyAsked, n.emptyAt, n.minorityWait = true, now, false
		n.env.SetTimer(ElectionSettle, electTimer)
		return false
	}
	if now-n.emptyAt < ElectionSettle {
		return false
	}
	if !n.SeesMajority() && !n.deathConfirmed() {
		if !n.planted.Has(PlantMinorityChainWaits) && n.seesHalf() {
			n.askDeathWord() // node_deathword.go
		}
		if !n.minorityWait {
			n.minorityWait = true
			n.Trace(Event{Kind: EvNote, Frag: n.frag,
				Note: "no empty restart from a minority view: the state's holders may serve on the other side of a partition"})
		}
		return false
	}
	n.emptyAsked = false
	return true
}

// emptySettling reports whether an empty restart this node asked for
// waits for its view to settle (MayRestartEmpty). The election has nothing
// to ask meanwhile: its re-check and probe were answered before the
// strategy asked, and the settle timer elects again. Asking them anew on
// every message during the settle made a loop of queries and answers that
// ended only with the settle (hundreds of messages in the simulator, a
// livelock with instant links).
func (n *Node) emptySettling() bool {
	return n.emptyAsked && !n.planted.Has(PlantSettleRequeries) && (n.env.Now()-n.emptyAt < ElectionSettle || n.awaitsDeathWord())
}

// viewMayElect reports whether a takeover that no probe answer confirmed
// may rest on the detector's view alone: only while the node sees a
// majority of the deployment alive. A host in a minority island that
// still sees a host on each side of its fragment there (its fragment's
// secondaries cut off together, say) would otherwise take over with
// state that lags the primary serving on the other side, and after the
// heal its newer epoch would fence that primary and ask for input the
// upstream trimmed meanwhile.
func (n *Node) viewMayElect() bool {
	if n.planted.Has(PlantMinorityRestart) || n.SeesMajority() {
		return true
	}
	if !n.minorityWait {
		n.minorityWait = true
		n.Trace(Event{Kind: EvNote, Frag: n.frag,
			Note: "no takeover on a minority view: the primary may serve on the other side of a partition"})
	}
	return false
}
