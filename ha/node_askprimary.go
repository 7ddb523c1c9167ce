package ha

import (
	"fmt"
	"time"
)

// A host on the minority side of a partition declares the hosts of the
// other side dead, its fragment's primary among them, and rightly does not
// take over (not Connected, viewMayElect, MayRestartEmpty): the primary
// most likely serves on the other side. That declaration outlives the
// partition: the detector says nothing until a heartbeat from the primary
// arrives, while the heal brings the rest back in whatever order their
// heartbeats come.
// A host that sees the majority back (or hears its neighbours answer its
// probe) before it sees its primary alive would take over from a primary
// that served all along, with a checkpoint older than the input the
// upstream trimmed for that primary meanwhile, and fence it: a gap where
// the standby strategies promise none.
//
// The rule: a host whose declaration of its primary's death is no newer
// than a moment it saw only a minority of the deployment alive asks the
// primary itself before it takes over. An answer shows the primary alive
// (the detector will say so within a heartbeat; the election ends then):
// the host waits and asks again every ElectionSettle. No answer within
// ElectionSettle: the primary is gone or still cut off, and the host
// probes its neighbours afresh — their first answers came before their
// own views settled (a backup in an island with its upstream and
// downstream primaries but neither the sources nor the sink heard both
// answer before they saw their far sides dead) — and takes over on their
// answers (rule 8 of docs/reliability.md) or, if none come, on a majority
// view. After a real crash the takeover comes ElectionSettle and a round
// trip later, and only on such a host (with half the deployment crashed no
// host sees a majority, and the fresh answers are what let it take over).

// askPrimary is a node's state for asking its primary before a takeover.
type askPrimary struct {
	minority bool // a declaration left the node seeing only a minority
	// when one last did; declarations no newer are suspect
	minorityAt time.Duration
	asking     bool          // the primary was asked
	askedAt    time.Duration // when
	answered   bool          // the primary answered since
	silent     bool          // it did not answer: a fresh probe decides
}

// noteMinority records, after a declaration of death, whether the node
// now sees only a minority of the deployment alive (PeerDown).
func (n *Node) noteMinority() {
	if !n.SeesMajority() {
		n.ap.minority, n.ap.minorityAt = true, n.env.Now()
	}
}

// primaryAnswered notes a message from this node's fragment's primary
// while the node asks it (Deliver).
func (n *Node) primaryAnswered(m *Message) {
	if n.ap.asking && n.frag >= 0 && m.From == n.routes[n.frag].Primary {
		n.ap.answered = true
	}
}

// askPrimaryOff ends the question: the primary is seen alive, or another
// host is primary. The minority mark stays: a declaration it makes
// suspect is one no newer than it, and a later one on a majority view is
// newer.
func (n *Node) askPrimaryOff() { n.ap.asking, n.ap.answered, n.ap.silent = false, false, false }

// awaitsPrimary reports whether an elected node must not take over yet
// because it asks its primary, declared dead on a minority view, whether
// it lives (see above); it asks and arms the election timer as needed.
func (n *Node) awaitsPrimary() bool {
	if n.planted.Has(PlantMinorityDeathTrusted) || !n.ap.minority || n.ap.silent {
		return false
	}
	prim := n.routes[n.frag].Primary
	if at, ok := n.rc.downAt[prim]; !ok || at > n.ap.minorityAt {
		return false // declared dead since, on a view that may elect
	}
	now := n.env.Now()
	switch {
	case !n.ap.asking:
		n.Trace(Event{Kind: EvNote, Peer: prim, Epoch: n.Epoch(),
			Note: fmt.Sprintf("asking %s whether it lives before taking over: declared dead while this host saw only a minority", prim)})
	case n.ap.answered:
		if now-n.ap.askedAt < ElectionSettle {
			return true
		}
	case now-n.ap.askedAt < ElectionSettle:
		return true
	default:
		// No answer: the primary is gone, or still cut off. The
		// neighbours' answers to the probe are older now, given before
		// their own views settled (a neighbour in the same island had
		// not yet seen its far side dead): a fresh probe decides, and
		// without its answers the view (viewMayElect).
		n.ap.asking, n.ap.answered, n.ap.silent = false, false, true
		n.probing, n.heard = false, false
		n.probe()
		return true
	}
	n.ap.asking, n.ap.answered, n.ap.askedAt = true, false, now
	n.Send(prim, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
	n.env.SetTimer(ElectionSettle, electTimer)
	return true
}
