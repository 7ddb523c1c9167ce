package passivestandby

import (
	"fmt"

	"github.com/streamha/streamha/ha"
)

// Successors implements ha.Successor: the failed primary's announced
// backup first (it holds the checkpoint), then the ring after the primary.
func (h *hooks) Successors() []string {
	n := h.n
	ring := n.Ring()
	if b := h.backupOf[n.Route(n.Frag()).Primary]; b != "" {
		return append([]string{b}, ring...)
	}
	return ring
}

// TakeOver implements ha.Successor: the backup takes over from its
// checkpoint of the failed primary; any other host (no backup with a
// checkpoint survived) restarts the fragment with empty state.
func (h *hooks) TakeOver() {
	n := h.n
	prim := n.Route(n.Frag()).Primary
	b, announced := h.backupOf[prim]
	switch {
	case h.held != nil && h.held.from == prim && (b == n.Host() || b != "" && !n.Planted().Has(ha.PlantLiveCandidateWaited)):
		// The backup, or an earlier backup elected past the announced
		// one (ha's candidate wait): its checkpoint beats empty state.
		h.restoreAndTakeOver(prim)
	case b == n.Host():
		h.emptyTakeOver(fmt.Sprintf("backup of %s without a complete checkpoint from it", prim))
	case announced && b != "":
		h.emptyTakeOver(fmt.Sprintf("backup %s of %s failed too", b, prim))
	default:
		h.emptyTakeOver(fmt.Sprintf("no backup of %s survived", prim))
	}
}

// restoreAndTakeOver makes this backup the primary from its latest complete
// checkpoint of prim.
func (h *hooks) restoreAndTakeOver(prim string) {
	n := h.n
	c := h.held
	for p, seq := range c.in {
		n.SetInputSeq(p, seq)
	}
	n.SetOutputSeq(c.outSeq)
	n.SetOutputLog(c.log)
	n.Trace(ha.Event{Kind: ha.EvRestore, Peer: prim, Seq: c.id, N: int64(c.bytes),
		Note: fmt.Sprintf("input positions %v, output seq %d, %d unacknowledged outputs", c.in, c.outSeq, len(c.log))})
	if h.cfg.LogNondeterminism && h.decFrom == prim && h.decStart == c.decisions && len(h.dec) > 0 {
		n.FollowOrder(h.dec)
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: prim, N: int64(len(h.dec)),
			Note: "following the interleaving decisions made after the checkpoint"})
	}
	h.held, h.dec = nil, nil
	n.TakeOver(ha.TakeoverOptions{})
	// Resend the unacknowledged output: the downstream drops by seq what
	// it already has and gets what the failed primary never sent.
	for _, d := range n.Downstream() {
		if !n.Down(d) {
			n.Replay(d, 0)
		}
	}
	h.becomePrimary()
}

// emptyTakeOver restarts the fragment with empty state, like amnesia, but
// asks the upstreams to replay all they retained.
func (h *hooks) emptyTakeOver(why string) {
	n := h.n
	if !n.MayRestartEmpty() {
		return // the next detector event elects again
	}
	n.Trace(ha.Event{Kind: ha.EvNote, Note: why + ": restarting with empty state (expect a gap)"})
	if err := n.Restart(); err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: fmt.Sprintf("restart failed: %v", err)})
		return
	}
	h.held, h.dec = nil, nil
	n.TakeOver(ha.TakeoverOptions{ResetSeq: true})
	h.becomePrimary()
}
