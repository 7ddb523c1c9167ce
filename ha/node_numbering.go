package ha

import "fmt"

// A primary that restarts its fragment with empty state numbers its output
// afresh from 1 (Route.ResetSeq), and every receiver that learns its route
// resets its duplicate filter for that port. A host that was no receiver
// then — a backup — learns the route but has no filter to reset, and when
// it later takes over from its checkpoint it restores the input position
// its primary had: a position in the upstream's old numbering. It asks the
// new upstream to replay after that position and drops everything the
// upstream sends below it as duplicates, for as long as the upstream's new
// numbering stays below the old position: to the end of the run, when
// the old primary had counted far (passive standby, W.1 restored position
// 718 while U.2, restarted empty, had emitted 200).
//
// The rule: a replay's end marker and an idle tail marker carry the
// sender's last output seq. When the sender is the upstream's current
// primary, at the epoch whose route restarted the numbering, no receiver
// can hold a position beyond that seq in that numbering: the sender made
// every tuple of it. A position beyond it counts in an older numbering,
// so the receiver resets the port and asks for everything the upstream
// retains (what it no longer retains is an honest gap, a replay-from
// marker). The restored position stays in the checkpoint: a route that
// continues a restarted numbering at a later epoch (a backup of the
// restarted primary took over) carries no ResetSeq, and there a receiver
// ahead of the sender is legitimate (the sender re-emits from an older
// checkpoint), so the marker proves nothing and the node keeps waiting
// for the upstream to pass its position.

// staleNumbering reports whether m, a replay's end or tail marker on port
// p, shows that the port's position counts in an older numbering of its
// upstream; it then resets the port and asks the upstream to replay
// everything it retains.
func (n *Node) staleNumbering(p int, m *Message) bool {
	if n.planted.Has(PlantStaleNumberingKept) || !n.fencing || n.noRepair || n.frag < 1 {
		return false
	}
	r := n.routes[n.frag-1]
	in := &n.in[p]
	if !r.ResetSeq || m.From != r.Primary || m.Epoch != r.Epoch || !in.seen || in.last <= m.Seq {
		return false
	}
	n.Trace(Event{Kind: EvNote, Peer: m.From, Seq: in.last, Epoch: r.Epoch,
		Note: fmt.Sprintf("input position %d counts in an older numbering than %s's (it has sent up to %d since it restarted): asking for everything it retains", in.last, m.From, m.Seq)})
	n.resetPort(p, true)
	n.rep[p].fresh = true
	n.requestResume(p, false)
	return true
}
