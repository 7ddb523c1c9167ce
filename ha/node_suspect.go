package ha

import "slices"

// A primary keeps sending its output to a downstream receiver declared
// dead (flush): a declaration is a suspicion, and a receiver that was only
// paused — a little longer than this node's detection, short enough that
// nobody took over — must find its input in the order it would have had.
// A union's order is its arrival order: when a source withheld its output
// from a paused union and resent it once it saw the union alive, the
// union, back, had interleaved the other source's later tuples first, and
// a window behind it dropped the withheld ones as late (passive standby,
// soak seed 31, run 3096: 4 inputs lost, on a union that logs its
// decisions). What a crashed or cut-off receiver is sent is lost, and it
// comes back still a receiver, with a hole in its input that nothing else
// may fill before the end: every strategy with retained output lost those
// tuples (a gap), found by `streamha soak` (docs/reliability.md).
// noteSkipped and resendSkipped close the hole from the retained output
// queue as soon as the receiver is seen alive again.

// noteSkipped remembers, when host is declared dead, where the output it
// may miss begins.
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
// the retained output it may have missed; it drops by seq what it already
// has (a paused receiver got everything).
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
