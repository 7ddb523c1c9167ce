package ha

import (
	"slices"
	"time"
)

// End-of-stream repair. The end of a stream is the one tuple after which
// nothing follows to reveal that it was lost: gap repair sees a hole only
// when a later tuple arrives, and an idle tail marker is sent once. A lost
// end mark (loss or a short partition over the end of the stream) left
// every window downstream open for good: the last window's outputs never
// came. So the end of a stream is repaired like data, from both sides:
//
//   - A primary whose output ended (its last output is the end mark) keeps
//     sending an end-tail marker (the last seq) to each downstream receiver
//     that has not acknowledged the end, after EndRetry and again at
//     doubling intervals (at most maxEndRetry). A new primary whose output
//     already ended (a secondary that processed the end) does the same.
//   - A receiver acknowledges the end once it has accepted it (and again
//     for any end-tail it is not behind); an end-tail beyond its position
//     makes it ask for a resend from its position (gap repair, with the
//     resume's own retries).
//   - A replay always ends with the end mark when the output ended, even
//     when the sender retains nothing (amnesia) or trimmed it: the hole
//     before it is an honest gap, the end itself is never lost.

// EndAckType is the Type of the KindAck message with which a receiver
// acknowledges that it accepted the end of the sender's stream. The node
// handles it before the strategy's hooks see it.
const EndAckType = "end"

// EndTailType marks the tail marker a primary whose output ended sends
// until each receiver acknowledges the end: its Seq is the end mark's seq.
const EndTailType = "tail-end"

// endTimer re-sends end-tail markers; EndRetry is the first interval (the
// idle time of an ordinary tail), maxEndRetry the longest.
const (
	endTimer    = "ha.end"
	EndRetry    = tailIdle
	maxEndRetry = 16 * EndRetry
)

// endRepair is a node's end-of-stream repair state.
type endRepair struct {
	mark    Tuple           // the end mark this node emitted (valid when mark.Seq > 0)
	acked   map[string]bool // receivers that acknowledged it
	armed   bool
	backoff time.Duration
}

// endOn reports whether end-of-stream repair runs on this node.
func (n *Node) endOn() bool { return !n.noRepair && !n.planted.Has(PlantNoEndRepair) }

// noteEnd records that output tuple t (numbered) is the node's end mark,
// and starts sending end-tails.
func (n *Node) noteEnd(t *Tuple) {
	n.end.mark = *t
	n.end.acked = nil
	n.armEnd(true)
}

// forgetEnd drops the end mark when the output seq moves back before it
// (a restore, a restart).
func (n *Node) forgetEnd(outSeq uint64) {
	if n.end.mark.Seq > outSeq {
		n.end.mark, n.end.acked = Tuple{}, nil
	}
}

// armEnd arms the end-tail timer when the output ended; fresh restarts
// the backoff.
func (n *Node) armEnd(fresh bool) {
	if !n.endOn() || n.end.mark.Seq == 0 || n.IsSink() {
		return
	}
	if fresh || n.end.backoff == 0 {
		n.end.backoff = EndRetry
	}
	if n.end.armed {
		return
	}
	n.end.armed = true
	n.env.SetTimer(n.end.backoff, endTimer)
}

// sendEndTails sends the end-tail marker to every downstream receiver that
// has not acknowledged the end yet, and arms the timer again while any is
// left. A node that is not primary stops; TakeOver starts it again.
func (n *Node) sendEndTails() {
	n.end.armed = false
	if n.end.mark.Seq == 0 || !n.IsPrimary() || n.IsSink() {
		return
	}
	waiting := false
	if n.released() >= n.end.mark.Seq {
		for _, h := range n.Downstream() {
			if n.end.acked[h] {
				continue
			}
			waiting = true
			if _, held := n.awaiting[h]; held || n.down[h] {
				continue // the resume's replay or resendSkipped brings the end
			}
			n.Send(h, &Message{Kind: KindData, Stream: n.outPort, Type: EndTailType, Seq: n.end.mark.Seq})
		}
	} else {
		waiting = true // the output commit holds the end back
	}
	if waiting {
		n.end.backoff = min(2*n.end.backoff, maxEndRetry)
		n.armEnd(false)
	}
}

// endPeerUp sends the end-tail at once to host, seen alive again, when it
// is a downstream receiver that has not acknowledged the end: after a long
// partition the timer's interval may have grown to maxEndRetry.
func (n *Node) endPeerUp(host string) {
	if !n.endOn() || n.end.mark.Seq == 0 || n.end.acked[host] || !n.IsPrimary() || n.IsSink() ||
		n.released() < n.end.mark.Seq || !slices.Contains(n.Downstream(), host) {
		return
	}
	if _, held := n.awaiting[host]; held {
		return
	}
	n.Send(host, &Message{Kind: KindData, Stream: n.outPort, Type: EndTailType, Seq: n.end.mark.Seq})
}

// onEndAck notes that a receiver accepted the end of this node's output.
func (n *Node) onEndAck(m *Message) {
	if n.end.mark.Seq == 0 || m.Seq < n.end.mark.Seq {
		return
	}
	if n.end.acked == nil {
		n.end.acked = map[string]bool{}
	}
	n.end.acked[m.From] = true
}

// endAcked reports whether host acknowledged the end of this node's output.
func (n *Node) endAcked(host string) bool { return n.end.mark.Seq > 0 && n.end.acked[host] }

// ackEnd acknowledges to host, the sender of port p, that the port has
// everything up to and including the end of its stream.
func (n *Node) ackEnd(p int, to string) {
	if !n.endOn() {
		return
	}
	n.Send(to, &Message{Kind: KindAck, Type: EndAckType, Stream: uint8(p), Seq: n.in[p].last})
}

// onEndTail handles an end-tail marker on port p: a receiver behind it
// asks for the rest, one that is not acknowledges the end.
func (n *Node) onEndTail(p int, m *Message) {
	in := &n.in[p]
	if in.seen && m.Seq > in.last {
		n.askRepair(p, "the upstream's stream ended after what arrived: asking it to resend")
		return
	}
	if m.Seq <= in.last && len(n.rep[p].held) == 0 {
		n.ackEnd(p, m.From)
	}
}

// replayEnd sends the end mark after a replay from seq from that did not
// carry it (the sender retains nothing, or trimmed it).
func (n *Node) replayEnd(to string, from uint64, sentUpTo uint64) {
	e := n.end.mark
	if !n.endOn() || e.Seq == 0 || e.Seq <= from || e.Seq <= sentUpTo || n.released() < e.Seq {
		return
	}
	n.resend = append(n.resend[:0], e)
	n.sendData(to, n.resend)
}
