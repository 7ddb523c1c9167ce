package ha

import (
	"slices"
)

// ---- input positions and order ----

// InputSeq is the position of input port that the node's state reflects:
// the highest seq delivered to the hooks and operators. It trails the seq
// filter's position only while a catch-up merge holds tuples of the port
// (node_merge.go), so a checkpoint or acknowledgement taken from it never
// covers a tuple the state has not seen.
func (n *Node) InputSeq(port int) uint64 {
	if m := n.merge[port]; len(m) > 0 {
		return m[0].Seq - 1
	}
	return n.in[port].last
}

// SetInputSeq sets the duplicate filter of input port (after a restore).
// A position of 0 restored with fencing on means nothing was received
// yet: seq 1 comes next, and a later one is a gap to repair, as after
// Restart. Taking any first seq as the start of the stream, a restored
// backup lost the 512 tuples of a replay message before the first one it
// accepted, and saw no gap (soak seed 78, passive standby, run 256: a
// window's 29 outputs missing).
func (n *Node) SetInputSeq(port int, seq uint64) {
	n.resetPort(port, seq > 0 || (n.fencing && !n.planted.Has(PlantRestoredZeroIsFresh)))
	n.in[port].last = seq
}

// AskResend asks the upstream of input port to resend everything after
// the port's position (gap repair, with the resume's retries). A strategy
// that moved the position back behind what the upstream already sent
// (SetInputSeq, Restart) calls it: a gap shows only when a later tuple
// arrives, and after the end of the stream (acknowledged, so the sender
// sends no more end-tails) none does.
func (n *Node) AskResend(port int, why string) { n.askRepair(port, why) }

// RecordOrder turns on recording of the input port of every processed
// tuple: the node's non-deterministic interleaving decisions.
func (n *Node) RecordOrder(on bool) { n.recordOrder = on }

// RecordedDecisions is the number of decisions recorded and not yet taken
// with TakeOrderLog.
func (n *Node) RecordedDecisions() int { return len(n.orderLog) }

// TakeOrderLog returns and clears the recorded decisions.
func (n *Node) TakeOrderLog() []uint8 {
	l := n.orderLog
	n.orderLog = nil
	return l
}

// Pending is the number of accepted input tuples waiting for the
// interleaving decisions they must follow (see FollowOrder).
func (n *Node) Pending() int { return len(n.pending) }

// FollowOrder makes the node process inputs in the given port order: a
// tuple from another port waits until the decisions reach it. When the
// decisions run out the node returns to arrival order.
func (n *Node) FollowOrder(decisions []uint8) {
	n.follow = append(n.follow, decisions...)
	n.drainPending()
}

func (n *Node) onData(m *Message) {
	if n.Stale(m) {
		n.stats.Fenced++
		n.Trace(Event{Kind: EvFenced, Peer: m.From, Epoch: m.Epoch, N: int64(len(m.Tuples)), Note: "dropped data from a stale epoch"})
		n.staleData(m)
		return
	}
	if !n.IsReceiver() {
		n.wrongReceiver(m)
		return
	}
	if int(m.Stream) >= n.Inputs() {
		return
	}
	p := int(m.Stream)
	if (m.Type == ReplayEndType || m.Type == TailType) && n.staleNumbering(p, m) {
		return // node_numbering.go
	}
	in := &n.in[p]
	wasEnded := n.ended[p]
	switch m.Type {
	case ReplayEndType:
		if n.catching&(1<<m.Stream) != 0 {
			n.catchMark[m.Stream] = m.Seq
			n.marked |= 1 << m.Stream
			n.checkCaughtUp(m.Stream)
			n.drainMerge() // the other port's held tuples may go now
		}
		n.resumeAnswered(p)
	case TailType:
		if in.seen && m.Seq > in.last {
			n.askRepair(p, "the upstream sent more than arrived: asking it to resend")
		}
	case EndTailType:
		n.onEndTail(p, m)
	case ReplayFromType:
		switch {
		case n.rep[p].fresh:
			// The replay after a restart starts after m.Seq: nothing lost.
			n.rep[p].fresh = false
			n.takeHeldBefore(p, m.Seq, m.From)
			in.last = max(in.last, m.Seq)
			n.drainHeld(p)
		case !in.seen:
			// A fresh position: the replay simply starts after m.Seq.
			in.last, in.seen = m.Seq, true
		case m.Seq > in.last:
			n.skipTo(p, m.Seq, m.From)
		}
	}
	for i := range m.Tuples {
		t := &m.Tuples[i]
		if t.Seq <= in.last {
			n.stats.Duplicates++
			continue
		}
		if in.seen && t.Seq > in.last+1 {
			if n.fencing && !n.noRepair {
				n.holdBeyondGap(p, t)
				continue
			}
			// Without epochs a receiver cannot tell whose numbering a
			// gap belongs to (a zombie's or the new primary's): it takes
			// the gap as it comes, and split brain shows.
			n.noteGap(p, t.Seq-1, m.From)
		}
		n.accept(m.Stream, *t)
		if len(n.rep[p].held) > 0 {
			n.drainHeld(p)
		}
	}
	if len(n.pending) > 0 {
		n.drainPending()
	}
	if !wasEnded && n.ended[p] {
		n.ackEnd(p, m.From)
	}
}

// accept takes input tuple t, next in seq order on port, and delivers it
// (or holds it in the catch-up merge, see node_merge.go).
func (n *Node) accept(port uint8, t Tuple) {
	in := &n.in[port]
	in.last, in.seen = t.Seq, true
	n.rep[port].fresh = false
	t.Stream = port
	if t.IsEnd() {
		n.ended[port] = true
	}
	if n.merging() {
		n.merge[port] = append(n.merge[port], t)
		n.drainMerge()
		return
	}
	n.deliver(t)
}

// deliver hands accepted input tuple t to the input hook, then processes
// it (or queues it behind the interleaving decisions it must follow).
func (n *Node) deliver(t Tuple) {
	if n.inHook != nil {
		n.inScratch = t
		if !n.inHook.Input(&n.inScratch) {
			return
		}
		t = n.inScratch
	}
	if n.follow != nil || len(n.pending) > 0 {
		n.pending = append(n.pending, t)
		return
	}
	n.process(t)
}

func (n *Node) drainPending() {
	for len(n.pending) > 0 {
		if len(n.follow) == 0 {
			n.follow = nil
			p := n.pending
			n.pending = nil
			for _, t := range p {
				n.process(t)
			}
			return
		}
		i := slices.IndexFunc(n.pending, func(t Tuple) bool { return t.Stream == n.follow[0] })
		if i < 0 {
			if n.impossibleDecision() {
				continue // following ended: arrival order from here
			}
			return
		}
		t := n.pending[i]
		n.pending = slices.Delete(n.pending, i, i+1)
		n.follow = n.follow[1:]
		n.process(t)
	}
	if len(n.follow) == 0 {
		n.follow = nil
	}
}

// impossibleDecision ends decision following when the next decision can
// never be followed: it names a port this node does not have, or a port
// whose stream ended with none of its tuples waiting. Decisions come from
// another host over the network — a damaged byte, a log that does not
// match the input — and the node would hold every later input behind
// that decision for good: output would never resume. The decisions are
// a wish to repeat a predecessor's order, never a reason to stall; the
// node drops them and returns to arrival order (a union's order may
// then differ from the predecessor's, as after any decision lost).
func (n *Node) impossibleDecision() bool {
	if n.planted.Has(PlantImpossibleDecisionWaits) {
		return false
	}
	p := int(n.follow[0])
	if p < n.Inputs() && (!n.ended[p] || len(n.merge[p]) > 0) {
		return false
	}
	n.Trace(Event{Kind: EvNote, N: int64(len(n.follow)), Seq: uint64(p),
		Note: "an interleaving decision names no input that can still come: following no more decisions"})
	n.follow = n.follow[:0]
	return true
}

// checkCaughtUp traces EvCaughtUp once every input port has processed
// everything its upstream replayed after a takeover.
func (n *Node) checkCaughtUp(port uint8) {
	if n.marked&(1<<port) == 0 || n.InputSeq(int(port)) < n.catchMark[port] || len(n.pending) > 0 {
		return
	}
	n.catching &^= 1 << port
	if n.catching == 0 {
		n.Trace(Event{Kind: EvCaughtUp, Frag: n.frag, Epoch: n.Epoch()})
	}
}

func (n *Node) process(t Tuple) {
	n.stats.Tuples++
	if n.recordOrder {
		n.orderLog = append(n.orderLog, t.Stream)
	}
	if n.IsSink() {
		if t.IsEnd() {
			return // the end of a stream is no output
		}
		n.pendWork++
		n.delivered = t
		n.Trace(Event{Kind: EvDeliver, Tuple: &n.delivered})
		return
	}
	if len(n.ops) == 0 {
		n.pendWork++
		n.output(t)
		return
	}
	n.pendWork += len(n.ops)
	n.ops[0].Process(t, n.emits[0])
	if n.catching&(1<<t.Stream) != 0 {
		n.checkCaughtUp(t.Stream)
	}
}
