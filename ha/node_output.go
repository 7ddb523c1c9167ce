package ha

// ---- output queue ----

// SetRetain says whether emitted tuples are kept in the output queue until
// trimmed (needed for any replay). Turning it off drops the queue.
func (n *Node) SetRetain(on bool) {
	n.retain = on
	if !on {
		n.stats.PeakQueue = n.peakQueue()
		n.out = outQueue{}
	}
}

// peakQueue is the most output tuples the node has retained at once.
func (n *Node) peakQueue() int64 { return max(n.stats.PeakQueue, int64(n.out.Max())) }

// OutputLen is the number of retained output tuples.
func (n *Node) OutputLen() int { return n.out.Len() }

// OutputAt is the i-th retained output tuple in seq order, oldest first
// (0 ≤ i < OutputLen). It is the node's own: do not modify it.
func (n *Node) OutputAt(i int) *Tuple { return n.out.At(i) }

// OutputIndex is the position of the first retained output tuple whose
// seq is at least seq: OutputLen when there is none.
func (n *Node) OutputIndex(seq uint64) int { return n.out.Index(seq) }

// AppendOutput appends the retained output tuples at positions [from, to)
// to dst and returns it.
func (n *Node) AppendOutput(dst []Tuple, from, to int) []Tuple { return n.out.AppendTo(dst, from, to) }

// OutputSeq is the seq of the last tuple emitted.
func (n *Node) OutputSeq() uint64 { return n.outNext }

// SetOutputSeq sets the output seq counter (after restoring a checkpoint).
func (n *Node) SetOutputSeq(s uint64) {
	n.outNext = s
	n.forgetEnd(s)
}

// SetOutputLog replaces the retained output (after restoring a checkpoint).
func (n *Node) SetOutputLog(ts []Tuple) {
	n.out.Reset()
	for i := range ts {
		n.out.Push(&ts[i])
	}
	if k := len(ts); k > 0 && ts[k-1].IsEnd() && ts[k-1].Seq > 0 {
		n.noteEnd(&ts[k-1])
	}
}

// TrimOutput drops retained tuples with seq ≤ upTo and returns how many it dropped.
func (n *Node) TrimOutput(upTo uint64) int {
	d := n.out.Index(upTo + 1)
	if d == 0 {
		return 0
	}
	n.out.Drop(d)
	n.Trace(Event{Kind: EvTrim, Seq: upTo, N: int64(n.out.Len())})
	return d
}

// Replay sends to host the retained tuples with seq > from, in order.
func (n *Node) Replay(to string, from uint64) {
	i, end := n.out.Index(from+1), n.out.Len()
	if n.gated {
		end = n.out.Index(n.released() + 1) // never past the output commit
	}
	n.Trace(Event{Kind: EvReplayStart, Peer: to, Seq: from, N: int64(end - i)})
	// What this node can no longer provide after from: the receiver takes
	// that hole as lost instead of waiting for it.
	avail := from
	switch {
	case i < end:
		if s := n.out.At(i).Seq; s > from+1 {
			avail = s - 1
		}
	case i == n.out.Len() && n.released() > from:
		avail = n.released() // retains nothing after from
	}
	if e := n.end.mark.Seq; e > from && n.endOn() {
		delete(n.end.acked, to) // the receiver no longer has the end
		if avail >= e && n.released() >= e {
			avail = e - 1 // the end itself follows (replayEnd)
		}
	}
	if avail > from {
		n.Send(to, &Message{Kind: KindData, Stream: n.outPort, Type: ReplayFromType, Seq: avail})
	}
	upTo := n.released()
	n.lastReplayTo, n.lastReplayUpTo = to, upTo
	n.sendRetained(to, i, end)
	sentUpTo := from
	if end > i {
		sentUpTo = n.out.At(end - 1).Seq
	}
	n.replayEnd(to, from, sentUpTo)
	// The marker tells the receiver which seq ends the replay, so it can
	// trace when it has caught up.
	n.Send(to, &Message{Kind: KindData, Stream: n.outPort, Type: ReplayEndType, Seq: upTo})
	n.Trace(Event{Kind: EvReplayEnd, Peer: to, N: int64(end - i)})
	// Live output held for to can follow now: nothing overtakes this
	// replay on the link. Waiting for to's resume instead would hold it
	// for ever if the resume was lost, since this replay's end marker
	// already answers the receiver's request.
	if !n.planted.Has(PlantReplayKeepsHold) {
		n.releaseAwaiting(to)
	}
}

// sendRetained sends the retained outputs from queue index i to end to
// host, in messages of at most 512 tuples, each from the node's one replay
// batch (Env: Send lends).
func (n *Node) sendRetained(to string, i, end int) {
	for j := i; j < end; {
		c := min(end-j, 512)
		n.resend = n.out.AppendTo(n.resend[:0], j, j+c)
		n.sendData(to, n.resend)
		j += c
	}
}

// ReplayEndType marks the empty data message that ends a replay; its Seq
// is the sender's last output seq when it replayed.
const ReplayEndType = "replay-end"

// output assigns the next seq to t, retains it if asked, and queues it for
// the downstream when this node is primary.
func (n *Node) output(t Tuple) {
	n.outNext++
	t.Seq = n.outNext
	t.Stream = n.outPort
	if n.retain {
		n.out.Push(&t)
	}
	if t.IsEnd() {
		n.noteEnd(&t)
	}
	if n.IsPrimary() {
		n.batch = append(n.batch, t)
	}
	if n.traceEmits {
		tt := t
		n.Trace(Event{Kind: EvEmit, Seq: t.Seq, Epoch: n.Epoch(), Note: n.Role(), Tuple: &tt})
	}
	n.outScratch = t
	n.hooks.Output(&n.outScratch)
}

// flush charges the handler's work and sends the batched output.
func (n *Node) flush() {
	if n.pendWork > 0 || n.pendBytes > 0 {
		n.stats.Work += int64(n.pendWork)
		n.stats.WorkBytes += int64(n.pendBytes)
		n.env.Work(n.pendWork, n.pendBytes)
		n.pendWork, n.pendBytes = 0, 0
	}
	if len(n.batch) == 0 {
		return
	}
	if !n.IsPrimary() {
		n.batch = n.batch[:0]
		return
	}
	if n.gated {
		if n.gateBatch(); len(n.batch) == 0 {
			return
		}
	}
	for _, h := range n.Downstream() {
		// A receiver declared dead is sent to as before (node_suspect.go).
		if len(n.down) > 0 && n.down[h] && n.planted.Has(PlantSkipDeadReceiver) {
			continue
		}
		if held, ok := n.awaiting[h]; ok {
			n.keep(held, n.batch) // never past the hold: the replay must come first
			continue
		}
		n.sendData(h, n.batch)
	}
	n.batch = n.batch[:0]
	n.armTail()
}
