package activestandby

import (
	"slices"

	"github.com/streamha/streamha/ha"
)

// Output commit under ship_decisions. The decisions an output depends on
// travel to the secondaries before the output leaves, but on another link:
// loss may take the decisions and deliver the output. If the primary then
// crashes before a secondary asked for the decisions again, the successor
// decides that stretch itself, and the downstream, which kept the old
// primary's outputs at those seqs, drops the successor's different ones as
// duplicates by seq: inputs lost and inputs counted twice, where a union
// with shipped decisions promises wrong values only. So a union's primary
// holds each output back (ha.Node.GateOutput) until every secondary in its
// route acknowledged the decisions shipped with it; a secondary declared
// dead holds outputs back until the primary drops it from its route
// (pruneReceivers, after the view settled). A secondary acknowledges every
// batch of decisions it holds, and a primary whose outputs wait resends,
// every ship interval, the decisions a secondary has not acknowledged.

// commitPoint is an output seq and the count of decisions shipped with it.
type commitPoint struct{ dec, out uint64 }

// commitOn reports whether this node, a primary following ship_decisions
// on a union, commits its outputs.
func (h *hooks) commitOn() bool {
	return h.ordered() && h.n.IsPrimary() && !h.n.Planted().Has(ha.PlantUncommittedDecisions)
}

// awaits reports whether the commit waits for host x's acknowledgements:
// a secondary in the route, dead or alive, but not one whose state
// transfer is unacknowledged (it holds none of the state, and the transfer
// it installs carries every decision made so far).
func (h *hooks) awaits(x string) bool {
	return x != h.n.Host() && x != h.transfer.to
}

// waitsForAny reports whether the commit waits for any secondary.
func (h *hooks) waitsForAny() bool {
	n := h.n
	return slices.ContainsFunc(n.Route(n.Frag()).Receivers, h.awaits)
}

// updateCommit turns the output gate on while the route names a secondary,
// and releases what every secondary acknowledged.
func (h *hooks) updateCommit() {
	n := h.n
	if !h.commitOn() || !h.waitsForAny() {
		h.points = nil
		n.GateOutput(false)
		return
	}
	n.GateOutput(true)
	h.releaseCommitted()
}

// notePoint records, on a committing primary, the decisions output seq
// depends on (all shipped so far). Outputs that depend on the same
// decisions share one point: the last seq of the run.
func (h *hooks) notePoint(seq uint64) {
	if !h.commitOn() || !h.waitsForAny() {
		return
	}
	if k := len(h.points); k > 0 && h.points[k-1].dec == h.shipped {
		h.points[k-1].out = seq
		return
	}
	h.points = append(h.points, commitPoint{dec: h.shipped, out: seq})
}

// committed is the count of decisions every secondary acknowledged.
func (h *hooks) committed() uint64 {
	n := h.n
	least := h.shipped
	for _, s := range n.Route(n.Frag()).Receivers {
		if h.awaits(s) {
			least = min(least, h.decAcked[s])
		}
	}
	return least
}

// releaseCommitted lets the outputs whose decisions every secondary holds
// leave.
func (h *hooks) releaseCommitted() {
	c := h.committed()
	k := 0
	for k < len(h.points) && h.points[k].dec <= c {
		k++
	}
	if k == 0 {
		return
	}
	h.n.ReleaseOutput(h.points[k-1].out)
	h.points = slices.Delete(h.points, 0, k)
}

// onOrderAck takes a secondary's acknowledgement of the decisions it holds.
func (h *hooks) onOrderAck(m *ha.Message) {
	if !h.commitOn() || !h.awaits(m.From) || !slices.Contains(h.n.Route(h.n.Frag()).Receivers, m.From) || m.Seq > h.shipped {
		return
	}
	if m.Seq > h.decAcked[m.From] {
		h.decAcked[m.From] = m.Seq
		h.releaseCommitted()
	}
}

// resendUncommitted resends, while outputs wait, the decisions a live
// secondary has not acknowledged (its acknowledgement may have been lost).
func (h *hooks) resendUncommitted() {
	if !h.commitOn() || len(h.points) == 0 {
		return
	}
	for _, s := range h.n.Route(h.n.Frag()).Receivers {
		if !h.awaits(s) {
			continue
		}
		if a := h.decAcked[s]; a < h.shipped && !h.n.Down(s) {
			if d, ok := h.decLog.Since(a); ok {
				h.n.Send(s, &ha.Message{Kind: ha.KindStrategy, Type: msgOrder, Seq: a, Body: d})
			}
		}
	}
}
