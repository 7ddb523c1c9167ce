package ha

// A primary cut off from its downstream, or from the majority of its own
// fragment, may be on the minority side of a partition that split its
// fragment: a host on the other side can take over from it (it sees the
// downstream and an upstream host, and this primary dead) and will ask
// the upstream to replay from its own, older, position once the partition
// heals. Whatever this primary acknowledges meanwhile — its input
// checkpointed to a backup it recruited on its side, processed, passed
// on — lets the upstream trim exactly the tuples that successor needs: a
// gap under strategies that promise none. So while it is cut off, a
// primary sends its upstream no acknowledgement (docs/reliability.md,
// "A cut-off primary lets nothing be trimmed"); its strategy's later
// acknowledgements, cumulative, release the trim once it sees both again.
// The upstream retains more meanwhile; nothing else changes.

// CutOff reports whether this node, a primary, sees its downstream
// fragment's primary declared dead, or no majority of its own fragment's
// hosts alive.
func (n *Node) CutOff() bool {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() || len(n.down) == 0 {
		return false
	}
	if d := n.routes[n.DownstreamFrag()].Primary; d == "" || n.down[d] {
		return true
	}
	hosts := n.topo.Frags[n.frag].Hosts
	alive := 0
	for _, h := range hosts {
		if !n.down[h] {
			alive++
		}
	}
	return 2*alive <= len(hosts)
}

// withholdsAck reports whether m, about to be sent to host to, is an
// acknowledgement to this node's upstream that a cut-off primary must
// not send.
func (n *Node) withholdsAck(to string, m *Message) bool {
	if m.Kind != KindAck || n.planted.Has(PlantTrimWhileCutOff) || !n.CutOff() {
		return false
	}
	f, ok := n.topo.FragOf(to)
	if !ok || f != n.frag-1 {
		return false
	}
	n.Trace(Event{Kind: EvNote, Peer: to, Seq: m.Seq, N: int64(m.Stream),
		Note: "acknowledgement withheld: this primary is cut off from its downstream or its fragment's majority"})
	return true
}
