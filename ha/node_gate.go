package ha

// Output commit. A strategy whose outputs depend on choices that only its
// primary knows (the interleaving of a union) must not let an output leave
// before the replica that would take over holds those choices: otherwise
// the downstream may keep an output that no successor can rebuild — the
// primary crashes right after sending it, or, paused past the detector's
// timeout, sends it after its successor took over. GateOutput holds every
// output back from the downstream, in the retained output queue, until
// ReleaseOutput lets it go; a replay never sends past the gate either.

// GateOutput turns output commit on or off. Only a node that retains its
// output (SetRetain) can hold it back; turning the gate off releases
// everything held.
func (n *Node) GateOutput(on bool) {
	if !on {
		if n.gated {
			n.ReleaseOutput(n.outNext)
		}
		n.gated = false
		return
	}
	if !n.retain || n.gated {
		return
	}
	n.gated, n.gateUpTo = true, n.outNext-uint64(len(n.batch))
}

// ReleaseOutput lets the outputs up to seq upTo leave: those held so far
// are sent to the downstream receivers now, the later ones as they come.
func (n *Node) ReleaseOutput(upTo uint64) {
	if !n.gated || upTo <= n.gateUpTo {
		return
	}
	from := n.gateUpTo
	n.gateUpTo = upTo
	// Tuples of the batch still being built go with it (flush); only
	// those already held in the queue are sent here.
	last := min(upTo, n.outNext-uint64(len(n.batch)))
	if last <= from || !n.IsPrimary() {
		return
	}
	i, end := n.out.Index(from+1), n.out.Index(last+1)
	if i >= end {
		return
	}
	for _, h := range n.Downstream() {
		if _, held := n.awaiting[h]; held || n.down[h] {
			continue
		}
		n.sendRetained(h, i, end)
	}
	n.armTail()
}

// released is the last output seq that may leave the node.
func (n *Node) released() uint64 {
	if n.gated {
		return min(n.gateUpTo, n.outNext)
	}
	return n.outNext
}

// gateBatch cuts the batch to the outputs the gate lets through; the rest
// stays in the output queue until ReleaseOutput.
func (n *Node) gateBatch() {
	k := len(n.batch)
	for k > 0 && n.batch[k-1].Seq > n.gateUpTo {
		k--
	}
	n.batch = n.batch[:k]
}
