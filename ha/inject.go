package ha

// Inject hands the node input tuples its hooks held back (Hooks.Message
// consumed the message they came in) to be processed now, as if they had
// just arrived on input port port from its current upstream: they pass the
// duplicate filter, the InputHook, the operators and the output gate like
// any input, and what they produce is sent before Inject returns. Unlike a
// delivery, Hooks.Message does not see them again, and they are no word
// from any host (a probe before a takeover does not count them as its
// upstream's answer: they arrived earlier). This is how a hook hands the
// node input; it never calls a driver entry point (Driver).
//
// The tuples are checked against the epoch of the upstream's current
// route: a hook holds only tuples that were accepted when they arrived.
func (n *Node) Inject(port int, ts []Tuple) {
	if len(ts) == 0 {
		return
	}
	m := &Message{Kind: KindData, From: n.Upstream(port), Frag: n.frag - 1, Stream: uint8(port), Tuples: ts}
	if n.frag == 0 {
		m.Frag = FragSource
	} else {
		m.Epoch = n.routes[n.frag-1].Epoch
	}
	n.onData(m)
	n.flush()
}
