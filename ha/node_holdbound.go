package ha

import (
	"fmt"
	"slices"
)

// An upstream primary holds its live output for a new downstream primary
// until that primary's resume arrives, so that nothing overtakes the
// replay (rule 2 of docs/reliability.md). The resume goes to the upstream
// primary the new downstream primary knows when it takes over. When the
// upstream fragment takes over at the same moment, the two announcements
// cross: the new downstream primary sends its resume to the old upstream
// primary, which answers it, and learns the new upstream primary from its
// announcement with nothing pending; the new upstream primary, which
// learned the downstream's takeover from its announcement, holds its
// output for a resume that never comes, and output stops for good (soak
// seed 59, upstream backup run 4390: A.1 and B.1 took over 33 ms apart).
//
// The rule: a hold that no resume ended holdBound after it began ends by
// itself: the holder replays to the new primary from the first seq it
// held (or sends what it held, when it retains nothing), as a replay made
// on its own. Nothing is lost either way: a tuple the receiver has is
// dropped by its seq, a hole before the first held seq is repaired as any
// gap (rule 3), and a resume that comes later is answered as ever.

// holdBound is how long a hold waits for the new primary's resume before
// it ends by itself: the resume's own retries (ResumeRetry, doubling) have
// asked several times by then.
const holdBound = 10 * ElectionSettle

// expireHolds ends the holds that waited holdBound for a resume (see
// above); the tail timer calls it while this node is primary.
func (n *Node) expireHolds() {
	if n.planted.Has(PlantUnboundedHold) || len(n.awaiting) == 0 {
		return
	}
	now := n.env.Now()
	for _, h := range n.Downstream() {
		hd, ok := n.awaiting[h]
		if !ok || now-hd.since < holdBound {
			continue
		}
		n.Trace(Event{Kind: EvNote, Peer: h, Seq: hd.first,
			Note: fmt.Sprintf("no resume from %s in %v: the hold on its output ends, replaying what was held", h, holdBound)})
		n.releaseAwaiting(h)
	}
	for h, hd := range n.awaiting {
		if now-hd.since >= holdBound && !slices.Contains(n.Downstream(), h) {
			delete(n.awaiting, h) // no longer a receiver: nothing to send it
		}
	}
}
