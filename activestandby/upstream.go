package activestandby

import (
	"slices"

	"github.com/streamha/streamha/ha"
)

// sendAcks tells each upstream primary the highest seq this node accepted
// on its port, when that or the upstream changed.
func (h *hooks) sendAcks() {
	n := h.n
	for p := 0; p < n.Inputs(); p++ {
		up, s := n.Upstream(p), n.InputSeq(p)
		if up == "" || (s == h.lastAck[p] && up == h.lastAckTo[p]) {
			continue
		}
		h.lastAck[p], h.lastAckTo[p] = s, up
		n.Send(up, &ha.Message{Kind: ha.KindAck, Stream: uint8(p), Seq: s})
	}
}

func (h *hooks) onAck(m *ha.Message) {
	n := h.n
	if m.Level == levelRelayed {
		// From this fragment's primary to its secondary: the downstream
		// holds everything up to Seq.
		if h.fragment() && !n.IsPrimary() && m.From == n.Route(n.Frag()).Primary && m.Seq > h.relayed {
			h.relayed = m.Seq
			n.TrimOutput(m.Seq)
		}
		return
	}
	if m.Seq > h.acked[m.From] {
		h.acked[m.From] = m.Seq
		h.updateTrim()
	}
}

// updateTrim trims the output queue to the lowest position every current
// downstream receiver acknowledged (a receiver that never acknowledged
// holds it at 0) and relays it to this fragment's secondaries.
func (h *hooks) updateTrim() {
	n := h.n
	if !n.IsPrimary() || n.IsSink() {
		return
	}
	recv := n.Downstream()
	if len(recv) == 0 {
		return
	}
	t := h.acked[recv[0]]
	for _, r := range recv[1:] {
		t = min(t, h.acked[r])
	}
	if t <= h.trim {
		return
	}
	h.trim = t
	n.TrimOutput(t)
	if h.fragment() {
		for _, s := range h.secondaries() {
			n.Send(s, &ha.Message{Kind: ha.KindAck, Level: levelRelayed, Seq: t})
		}
	}
}

// onCatchUp serves a new secondary's request: replay after its transferred
// input position. Until the route naming it as a receiver arrives, the
// request waits, so that live tuples to it follow the replay.
func (h *hooks) onCatchUp(m *ha.Message) {
	n := h.n
	if !n.IsPrimary() || n.IsSink() {
		return
	}
	if !slices.Contains(n.Downstream(), m.From) {
		if _, ok := h.pending[m.From]; !ok {
			h.pendOrd = append(h.pendOrd, m.From)
		}
		h.pending[m.From] = m.Seq
		return
	}
	h.serveCatchUp(m.From, m.Seq)
}

func (h *hooks) serveCatchUp(to string, from uint64) {
	h.acked[to] = max(h.acked[to], from)
	h.n.Replay(to, from)
}
