package ha

import (
	"cmp"
	"slices"
	"time"
)

// A node never loses input that its upstream still retains. Three rules,
// shared by every strategy, make that hold under loss, partitions and
// failures close together (docs/reliability.md):
//
//   - A new primary's resume request goes to the upstream fragment's
//     current primary, again whenever it learns a new route for that
//     fragment, and again on a timer (ResumeRetry, doubling up to
//     maxResumeRetry) until a replay's end marker answers it — unless
//     the port's position moved meanwhile (a long replay under way).
//   - A receiver that sees a sequence gap on an input port holds the
//     tuples beyond the gap and asks the upstream, through the same resume
//     path, to resend from the gap. The upstream replays what it retains;
//     when it cannot fill the gap (it retains nothing, as under amnesia)
//     its replay starts with a ReplayFromType marker and the receiver
//     accepts the hole — an honest gap, traced as input_gap.
//   - An upstream holding live output for a new downstream primary (until
//     that primary's resume arrives, so that nothing overtakes the replay)
//     never sends it past the hold: the hold ends when it is answered, the
//     route changes, or the held host is superseded.

// resumeTimer is the node's own timer that re-sends unanswered resume requests.
const resumeTimer = "ha.resume"

// Resume retry intervals: the first retry follows ResumeRetry after the
// request, each later one twice as late, at most maxResumeRetry.
const (
	ResumeRetry    = 100 * time.Millisecond
	maxResumeRetry = 16 * ResumeRetry
)

// maxHeldInput bounds the tuples a port holds beyond a gap. Tuples past it
// are dropped: a retaining upstream sends them again with the repair.
const maxHeldInput = MaxTuplesPerMessage

// ReplayFromType marks the empty data message that starts a replay which
// cannot begin right after the requested seq: its Seq is the last seq the
// sender can no longer provide (it retains nothing older, or nothing at all).
const ReplayFromType = "replay-from"

// TailType marks the empty data message a primary sends its downstream
// receivers once its output has been idle for tailIdle: its Seq is the
// last output seq, so a receiver that lost the last tuples before a pause
// in the stream (nothing follows them to show the gap) asks for them.
const TailType = "tail"

// tailTimer is the node's own timer that sends tail markers; tailIdle is
// how long output must have been idle before it does.
const (
	tailTimer = "ha.tail"
	tailIdle  = 100 * time.Millisecond
)

// armTail arms the tail timer after output was sent.
func (n *Node) armTail() {
	if n.tailArmed || n.noRepair {
		return
	}
	n.tailArmed, n.tailAt = true, n.released()
	n.env.SetTimer(tailIdle, tailTimer)
}

// sendTail sends a tail marker to the downstream receivers once output
// stayed idle for a whole tailIdle, or waits another period.
func (n *Node) sendTail() {
	n.tailArmed = false
	if !n.IsPrimary() || n.IsSink() {
		return
	}
	n.expireHolds() // node_holdbound.go
	if n.released() != n.tailAt {
		n.armTail() // still busy
		return
	}
	if e := n.end.mark.Seq; e > 0 && n.tailAt >= e && n.endOn() {
		return // the output ended: end-tails (node_end.go) take over
	}
	for _, h := range n.Downstream() {
		if _, held := n.awaiting[h]; held || n.down[h] {
			continue
		}
		n.Send(h, &Message{Kind: KindData, Stream: n.outPort, Type: TailType, Seq: n.tailAt})
	}
}

// ResumeRepairType marks a resume request that repairs a sequence gap on a
// receiver's input port, as opposed to the resume of a takeover.
const ResumeRepairType = "repair"

// portRepair is the resume and gap-repair state of one input port.
type portRepair struct {
	// pending says a resume on this port awaits its answer (a replay's end
	// marker from the port's current upstream).
	pending bool
	// repair says the pending resume only repairs a gap (a takeover's
	// resume also redirects the upstream's output).
	repair bool
	// sentAt is the port's position when the request was last sent: a
	// position that moved since shows a replay under way, which a retry
	// would only duplicate.
	sentAt uint64
	// held are accepted-in-principle tuples beyond a gap, ascending by seq.
	held []Tuple
	// fresh says the port restarted (Node.Restart) and does not know where
	// its upstream's retained output begins: live tuples wait until the
	// answer to the resume says (a replay-from marker, or seq 1).
	fresh bool
}

// hold is the live output an upstream keeps back for a new downstream
// primary until that primary's resume request arrived.
type hold struct {
	since time.Duration // when the hold began (expireHolds)
	first uint64        // the first seq held (0: none yet)
	ts    []Tuple       // the held tuples, when the node retains no output
	lost  int           // tuples dropped past the bound (only without retention)
}

// requestResume asks the upstream of port p to replay what follows the
// port's position, and keeps asking until it is answered.
func (n *Node) requestResume(p int, repair bool) {
	rp := &n.rep[p]
	if !rp.pending {
		rp.repair = repair
	} else if !repair {
		rp.repair = false // a takeover's resume supersedes a repair
	}
	rp.pending = true
	n.sendResume(p)
	n.resumeBackoff = 0
	n.armResume()
}

// sendResume sends port p's resume request to the port's current upstream.
func (n *Node) sendResume(p int) {
	up := n.Upstream(p)
	if up == "" || n.down[up] {
		return // sent again when a new route or the timer comes
	}
	typ := ""
	if n.rep[p].repair {
		typ = ResumeRepairType
	} else if n.IsPrimary() {
		// The route first, on the same link: an upstream that missed our
		// takeover would otherwise ignore the request.
		n.sendRoute(up, n.frag)
	}
	n.Send(up, &Message{Kind: KindResume, Type: typ, Stream: uint8(p), Seq: n.in[p].last})
	n.rep[p].sentAt = n.in[p].last
}

// armResume arms the retry timer if it is not armed.
func (n *Node) armResume() {
	if n.resumeArmed || n.noRepair {
		return
	}
	n.resumeArmed = true
	if n.resumeBackoff == 0 {
		n.resumeBackoff = ResumeRetry
	}
	n.env.SetTimer(n.resumeBackoff, resumeTimer)
}

// retryResumes re-sends every unanswered resume request.
func (n *Node) retryResumes() {
	n.resumeArmed = false
	if !n.IsReceiver() {
		n.rep = [2]portRepair{}
		return
	}
	waiting := false
	for p := range n.Inputs() {
		rp := &n.rep[p]
		if rp.pending {
			waiting = true
			if n.in[p].last > rp.sentAt {
				rp.sentAt = n.in[p].last
				continue
			}
			n.Trace(Event{Kind: EvRepair, Peer: n.Upstream(p), Seq: n.in[p].last, N: int64(p), Note: "resume not answered yet: asking again"})
			n.sendResume(p)
		}
	}
	if waiting {
		n.resumeBackoff = min(2*n.resumeBackoff, maxResumeRetry)
		n.armResume()
	}
}

// resumeAnswered notes that the upstream of port p ended a replay to this node.
func (n *Node) resumeAnswered(p int) {
	rp := &n.rep[p]
	if len(rp.held) == 0 {
		rp.pending = false
	}
}

// holdBeyondGap keeps t, which lies beyond a gap on port p, until the gap
// is filled, and asks the upstream to fill it.
func (n *Node) holdBeyondGap(p int, t *Tuple) {
	rp := &n.rep[p]
	i, found := slices.BinarySearchFunc(rp.held, t.Seq, func(h Tuple, s uint64) int { return cmp.Compare(h.Seq, s) })
	if found {
		n.stats.Duplicates++
		return
	}
	if len(rp.held) >= maxHeldInput {
		return
	}
	if i == len(rp.held) {
		rp.held = append(rp.held, *t)
	} else {
		rp.held = slices.Insert(rp.held, i, *t)
	}
	n.askRepair(p, "sequence gap: asking the upstream to resend from the gap")
}

// askRepair asks port p's upstream to resend what follows the port's
// position, unless a resume on the port is pending already for that
// position. A pending request for an older position was answered up to
// here (its end marker may have been lost): the gap is a new one.
func (n *Node) askRepair(p int, why string) {
	if rp := &n.rep[p]; rp.pending && (rp.sentAt == n.in[p].last || n.planted.Has(PlantOldRepairBlocksNewGap)) {
		return
	}
	n.Trace(Event{Kind: EvRepair, Peer: n.Upstream(p), Seq: n.in[p].last, N: int64(p), Note: why})
	n.requestResume(p, true)
}

// drainHeld accepts the held tuples of port p that are now in order.
func (n *Node) drainHeld(p int) {
	rp := &n.rep[p]
	in := &n.in[p]
	k := 0
	for k < len(rp.held) && rp.held[k].Seq <= in.last+1 {
		if rp.held[k].Seq == in.last+1 {
			n.accept(uint8(p), rp.held[k])
		}
		k++
	}
	if rp.held = rp.held[k:]; len(rp.held) == 0 {
		rp.held = nil
	}
}

// skipTo accepts that port p's upstream cannot provide the seqs up to
// upTo: the held tuples up to it are taken with their holes, and the port
// continues after it.
func (n *Node) skipTo(p int, upTo uint64, from string) {
	in := &n.in[p]
	rp := &n.rep[p]
	for len(rp.held) > 0 && rp.held[0].Seq <= upTo {
		t := rp.held[0]
		rp.held = rp.held[1:]
		if t.Seq <= in.last {
			continue
		}
		n.noteGap(p, t.Seq-1, from)
		n.accept(uint8(p), t)
	}
	n.noteGap(p, upTo, from)
	n.drainHeld(p)
}

// takeHeldBefore accepts, on a port that restarted (Node.Restart), the
// live tuples it holds with seqs up to upTo, where the upstream's first
// replay starts: the upstream no longer retains them (amnesia retains
// nothing), but they reached this node after its restart and are its
// input, not a replay of what its predecessor processed. The seqs before
// the first of them are none of this node's concern (its state starts
// empty); holes between them were lost on the way (a gap).
func (n *Node) takeHeldBefore(p int, upTo uint64, from string) {
	rp := &n.rep[p]
	if len(rp.held) == 0 || rp.held[0].Seq > upTo || n.planted.Has(PlantFreshDropsHeld) {
		return
	}
	in := &n.in[p]
	in.last = max(in.last, rp.held[0].Seq-1)
	for len(rp.held) > 0 && rp.held[0].Seq <= upTo {
		t := rp.held[0]
		rp.held = rp.held[1:]
		if t.Seq <= in.last {
			continue
		}
		n.noteGap(p, t.Seq-1, from)
		n.accept(uint8(p), t)
	}
	if len(rp.held) == 0 {
		rp.held = nil
	}
}

// noteGap records that the seqs of port p after its position up to upTo
// will never arrive, and moves the position there.
func (n *Node) noteGap(p int, upTo uint64, from string) {
	in := &n.in[p]
	if upTo <= in.last {
		return
	}
	g := upTo - in.last
	n.stats.InputGaps += int64(g)
	n.Trace(Event{Kind: EvGap, Peer: from, Seq: in.last + 1, N: int64(g)})
	in.last, in.seen = upTo, true
}

// resetPort forgets port p's position and held tuples; a pending resume
// stays pending (it is re-sent from the new position). With seen, the
// next tuple must be seq 1 (a new numbering starts).
func (n *Node) resetPort(p int, seen bool) {
	n.in[p] = inPort{seen: seen}
	n.merge[p], n.ended[p] = nil, false
	n.rep[p].held = nil
}

// holdFor starts holding live output for host, a new downstream primary.
func (n *Node) holdFor(host string) {
	if n.awaiting == nil {
		n.awaiting = map[string]*hold{}
	}
	n.awaiting[host] = &hold{since: n.env.Now()}
}

// keep adds the batch b to the hold for a host.
func (n *Node) keep(h *hold, b []Tuple) {
	if len(b) == 0 {
		return
	}
	if h.first == 0 {
		h.first = b[0].Seq
	}
	if n.retain {
		return // the output queue holds them
	}
	room := max(0, maxHeldInput-len(h.ts))
	if len(b) > room {
		h.lost += len(b) - room
		b = b[:room]
	}
	h.ts = append(h.ts, b...)
}

// releaseAwaiting sends the live output held for host while its resume
// request was on its way (the receiver drops by seq what the replay
// already brought).
func (n *Node) releaseAwaiting(host string) {
	h, ok := n.awaiting[host]
	if !ok {
		return
	}
	delete(n.awaiting, host)
	if h.first == 0 || !slices.Contains(n.Downstream(), host) || n.down[host] {
		return
	}
	if n.retain {
		if n.lastReplayTo != host || n.lastReplayUpTo < n.released() {
			// The answer did not cover the held output (a strategy
			// answered with a replay made earlier).
			n.Replay(host, h.first-1)
		}
		return
	}
	if h.lost > 0 {
		n.Trace(Event{Kind: EvNote, Peer: host, N: int64(h.lost),
			Note: "output held for a new primary past the bound was dropped (no output retained to replay it)"})
	}
	if len(h.ts) > 0 {
		n.Send(host, &Message{Kind: KindData, Stream: n.outPort, Tuples: h.ts})
	}
}
