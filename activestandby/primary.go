package activestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// recruitRetry is how soon a new primary retries starting a secondary
// while it still waits for input its predecessor's decisions refer to.
const recruitRetry = time.Millisecond

// secondaries are the live hosts besides this primary receiving its fragment's input.
func (h *hooks) secondaries() []string {
	n := h.n
	var out []string
	for _, x := range n.Route(n.Frag()).Receivers {
		if x != n.Host() && !n.Down(x) {
			out = append(out, x)
		}
	}
	return out
}

func (h *hooks) shipDecisions() {
	d := h.n.TakeOrderLog()
	if len(d) == 0 {
		return
	}
	seq := h.shipped
	h.shipped += uint64(len(d))
	h.decLog.Keep(d)
	// TakeOrderLog hands d over and receivers only read it (FollowOrder
	// copies what it keeps), so every secondary can share one body.
	for _, s := range h.secondaries() {
		h.n.Send(s, &ha.Message{Kind: ha.KindStrategy, Type: msgOrder, Seq: seq, Body: d})
	}
}

// onOrderNack resends the shipped decisions from the index a secondary
// asks for, when they are still kept.
func (h *hooks) onOrderNack(m *ha.Message) {
	n := h.n
	if !n.IsPrimary() || !slices.Contains(h.secondaries(), m.From) || m.Seq >= h.shipped {
		return
	}
	d, ok := h.decLog.Since(m.Seq)
	if !ok {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: "decisions asked for are no longer kept"})
		return
	}
	n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgOrder, Seq: m.Seq, Body: d})
}

// pruneReceivers drops the secondaries declared dead from a primary's
// route and recruits a new one. A primary cut off from its data path
// (ha.Node.SeesNeighbours) leaves its route alone: most hosts look dead
// from there, and each change would raise its epoch above that of the
// host taking over meanwhile. It prunes once it sees its neighbours again
// (PeerUp, or a neighbour's new route). Nor does a primary that sees a
// minority of the deployment alive (ha.PlantMinorityAcks).
func (h *hooks) pruneReceivers() {
	n := h.n
	if !h.fragment() || n.Fenced() || !n.IsPrimary() || !n.SeesNeighbours() {
		return
	}
	r := n.Route(n.Frag())
	if !slices.ContainsFunc(r.Receivers, n.Down) {
		return
	}
	if !n.SeesMajority() && !n.Planted().Has(ha.PlantMinorityAcks) {
		// On the minority side of a partition the secondaries may
		// serve on the other: a successor there resumes from its own
		// position, and dropping it would let the upstream trim to
		// this primary's acknowledgements. It prunes once it sees a
		// majority again (PeerUp), or never, and the upstream retains.
		return
	}
	if !n.ViewSettled() {
		// Dropping a secondary lets the upstream trim what it still
		// needs if it is alive across a partition: wait until the
		// detector's view settled, when a cut-off primary sees it is.
		n.SetTimer(n.SettleLeft(), timerPrune)
		return
	}
	n.SetReceivers(slices.DeleteFunc(slices.Clone(r.Receivers), n.Down))
	h.recruit()
}

// Successors implements ha.Successor: the secondaries in the route first
// (they hold the state), then the hosts that never served, then those
// that did (a resumed old primary, fenced: it restarts with empty state
// rather than come back with its stale state), each in ring order after
// the primary.
func (h *hooks) Successors() []string {
	n := h.n
	r := n.Route(n.Frag())
	var order []string
	for _, x := range r.Receivers {
		if x != r.Primary {
			order = append(order, x)
		}
	}
	hosts := n.Ring()
	for _, x := range hosts {
		if !h.retired[x] && !slices.Contains(order, x) {
			order = append(order, x)
		}
	}
	for _, x := range hosts {
		if !slices.Contains(order, x) {
			order = append(order, x)
		}
	}
	return order
}

// TakeOver implements ha.Successor.
func (h *hooks) TakeOver() { h.takeOver() }

func (h *hooks) takeOver() {
	n := h.n
	if !h.ready || !n.IsReceiver() {
		// No replica holds the state: restart empty, like amnesia (gap).
		if !n.MayRestartEmpty() {
			return // the next detector event elects again
		}
		if err := n.Restart(); err != nil {
			// The operators could not be rebuilt: taking over with the
			// old state would be silent corruption, so stay a standby.
			n.Trace(ha.Event{Kind: ha.EvNote, Note: "active-standby: no takeover: " + err.Error()})
			return
		}
		h.queue, h.credit, h.joining = nil, [2]int{}, [2]bool{}
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "no ready secondary left: restarting the fragment with empty state"})
		n.TakeOver(ha.TakeoverOptions{ResetSeq: true})
		h.stats.RestartTakeovers++
		h.ready = true
	} else {
		prev := n.Route(n.Frag()).Primary
		n.TakeOver(ha.TakeoverOptions{Receivers: []string{n.Host()}})
		h.stats.Takeovers++
		// Re-send what the downstream may not have; it drops duplicates by seq.
		h.stats.Resent += int64(n.OutputLen())
		for _, d := range n.Downstream() {
			if !n.Down(d) {
				n.Replay(d, h.relayed)
			}
		}
		if !h.startGrace(prev) {
			h.release()
		}
	}
	h.joining = [2]bool{}
	h.trim = max(h.trim, h.relayed)
	if h.ordered() {
		n.RecordOrder(true)
		h.armShip()
	}
	h.armAck()
	h.recruit()
}

// recruit starts a new secondary on the first unused live spare: it ships
// this primary's state, adds the spare to the receivers, and the spare asks
// the upstreams to replay after the transferred positions.
func (h *hooks) recruit() {
	n := h.n
	if len(h.secondaries()) > 0 {
		return
	}
	if h.credit != [2]int{} {
		// The predecessor's last decisions still wait for their input; the
		// state is consistent only once the node processed it.
		n.SetTimer(recruitRetry, timerRecruit)
		return
	}
	spare := ""
	for _, x := range n.Topology().Frags[n.Frag()].Hosts {
		if !h.retired[x] && !n.Down(x) {
			spare = x
			break
		}
	}
	if spare == "" {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "no spare left: running without a secondary"})
		return
	}
	m, err := h.stateFor(spare)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: spare, Note: fmt.Sprintf("state transfer to %s failed: %v", spare, err)})
		return
	}
	h.retired[spare] = true
	n.Send(spare, m)
	n.Trace(ha.Event{Kind: ha.EvCheckpointBeg, Peer: spare, Seq: m.Seq, N: int64(m.WireSize()),
		Note: fmt.Sprintf("state transfer to new secondary %s: %d logged tuples", spare, len(m.Tuples))})
	recv := append(slices.Clone(n.Route(n.Frag()).Receivers), spare)
	recv = slices.DeleteFunc(recv, func(x string) bool { return x != n.Host() && n.Down(x) })
	n.SetReceivers(recv)
	h.awaitTransferAck(spare) // transferretry.go
}

// stateFor builds a state transfer for spare (shipping the decisions made
// so far first) and charges and counts it.
func (h *hooks) stateFor(spare string) (*ha.Message, error) {
	n := h.n
	if h.ordered() {
		h.shipDecisions()
		n.TakeOrderLog()
	}
	// The state carries every decision shipped so far (commit.go).
	h.decAcked[spare] = max(h.decAcked[spare], h.shipped)
	m, err := snapshot(n, h.trim, h.shipped)
	if err != nil {
		return nil, err
	}
	size := m.WireSize()
	n.Work(0, size)
	n.AddCheckpointBytes(size)
	h.stats.Transfers++
	h.stats.TransferBytes += int64(size)
	return m, nil
}
