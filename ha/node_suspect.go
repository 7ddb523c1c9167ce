package ha

import "slices"

// A primary sends no output to a downstream receiver declared dead (flush
// skips it). When the receiver was only suspected — a pause a little longer
// than this node's detection, but short enough that nobody took over — it
// comes back still a receiver, with a hole in its input that nothing else
// fills: every strategy with retained output lost those tuples (a gap),
// found by `streamha soak` (docs/reliability.md). noteSkipped and
// resendSkipped close the hole from the retained output queue.

// noteSkipped remembers, when host is declared dead, where the output it
// will miss begins.
func (n *Node) noteSkipped(host string) {
	if !n.retain || !n.IsPrimary() || !slices.Contains(n.Downstream(), host) {
		return
	}
	if n.skipped == nil {
		n.skipped = map[string]uint64{}
	}
	n.skipped[host] = n.outNext
}

// resendSkipped replays to host, seen alive again and still a receiver,
// the retained output it missed. Nothing newer was sent to it meanwhile, so
// on the FIFO link the replay arrives before any later tuple and the
// receiver takes it in order (it drops by seq what it already has).
func (n *Node) resendSkipped(host string) {
	from, ok := n.skipped[host]
	if !ok {
		return
	}
	delete(n.skipped, host)
	if n.retain && n.IsPrimary() && slices.Contains(n.Downstream(), host) && from < n.outNext && !n.planted.Has(PlantSkippedNotResent) {
		n.Replay(host, from)
	}
}
