package activestandby

import (
	"fmt"

	"github.com/streamha/streamha/ha"
)

// held is an input tuple a decision-following secondary holds until the
// primary's decisions say when to process it.
type held struct {
	port uint8
	t    ha.Tuple
}

// onState installs a state transfer from this fragment's primary.
func (h *hooks) onState(m *ha.Message) {
	n := h.n
	if !h.fragment() || n.IsPrimary() || m.From != n.Route(n.Frag()).Primary {
		return
	}
	if h.ready {
		n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgStateAck}) // its acknowledgement was lost
		return
	}
	t, err := install(n, m)
	size := m.WireSize()
	n.Work(0, size)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("state transfer from %s rejected: %v", m.From, err)})
		return
	}
	h.ready = true
	n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgStateAck}) // transferretry.go
	h.relayed = t.Trim
	h.decNext, h.nackSeq = t.Decisions, 0
	for p := range t.In {
		h.joining[p] = true
		h.lastHeld[p] = t.In[p]
	}
	h.queue, h.credit = nil, [2]int{}
	n.Trace(ha.Event{Kind: ha.EvRestore, Peer: m.From, Seq: t.Out, N: int64(size),
		Note: fmt.Sprintf("state transfer from %s: %d operators, %d logged tuples", m.From, len(t.Ops), len(m.Tuples))})
	h.noteLog()
	h.requestCatchUp()
}

// requestCatchUp asks each upstream to replay after the transferred input
// positions, once this node knows it is a receiver.
func (h *hooks) requestCatchUp() {
	n := h.n
	if h.requested || !h.ready || !n.IsReceiver() || n.IsPrimary() {
		return
	}
	h.requested = true
	for p := 0; p < n.Inputs(); p++ {
		n.Send(n.Upstream(p), &ha.Message{Kind: ha.KindStrategy, Type: msgCatchUp, Stream: uint8(p), Seq: h.position(p)})
	}
	h.armAck()
}

// position is the highest input seq this node has accepted or holds on port p.
func (h *hooks) position(p int) uint64 {
	if h.following() {
		return h.lastHeld[p]
	}
	return h.n.InputSeq(p)
}

// onData filters the input of a secondary: nothing before its state
// arrived, only contiguous input while it joins (live tuples that overtook
// the catch-up replay are dropped: the replay brings them again), and all
// input held for the decisions while it follows the primary's order.
func (h *hooks) onData(m *ha.Message) bool {
	n := h.n
	if !h.fragment() || (n.IsPrimary() && !h.inGrace()) || n.Stale(m) || int(m.Stream) >= n.Inputs() || !n.IsReceiver() {
		return false
	}
	if !h.ready {
		return true
	}
	p := m.Stream
	if m.Type == ha.ReplayEndType {
		h.joining[p] = false
		return false
	}
	if h.joining[p] && len(m.Tuples) > 0 && m.Tuples[0].Seq > h.position(int(p))+1 {
		return true
	}
	if !h.following() && !h.inGrace() {
		return false
	}
	for _, t := range m.Tuples {
		if t.Seq <= h.lastHeld[p] {
			continue
		}
		h.lastHeld[p] = t.Seq
		h.queue = append(h.queue, held{port: p, t: t})
	}
	h.pump()
	return true
}

// onOrder hands a batch of the primary's decisions to the node and releases
// the held tuples they cover.
func (h *hooks) onOrder(m *ha.Message) {
	n := h.n
	if !(h.following() && m.From == n.Route(n.Frag()).Primary) && !(h.inGrace() && m.From == h.graceFrom) {
		return
	}
	d := m.Body // read only: FollowOrder copies the decisions it keeps
	switch end := m.Seq + uint64(len(d)); {
	case m.Seq > h.decNext:
		// Decisions were lost on the way: ask for them again (at most
		// once an ack interval) and wait for them in order.
		if now := n.Now(); h.nackSeq != h.decNext || now-h.nackAt >= h.cfg.AckInterval {
			h.nackSeq, h.nackAt = h.decNext, now
			n.Trace(ha.Event{Kind: ha.EvRepair, Peer: m.From, Seq: h.decNext, Note: "interleaving decisions lost: asking for them again"})
			n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgOrderNack, Seq: h.decNext})
		}
		return
	case end <= h.decNext:
		h.ackOrder(m.From) // had them already: the acknowledgement may have been lost
		return
	default:
		d = d[h.decNext-m.Seq:]
	}
	for _, p := range d {
		if p > 1 {
			n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("decision for unknown port %d ignored", p)})
			return
		}
	}
	n.FollowOrder(d)
	h.decNext += uint64(len(d))
	h.ackOrder(m.From)
	for _, p := range d {
		h.credit[p]++
	}
	h.pump()
}

// ackOrder tells the primary which decisions this secondary holds: it
// releases the outputs that depend on them (commit.go).
func (h *hooks) ackOrder(to string) {
	h.n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: msgOrderAck, Seq: h.decNext})
}

// pump passes to the node, per port, as many held tuples as it has
// decisions for; the node processes them in the decisions' order.
func (h *hooks) pump() {
	for p := range uint8(2) {
		if h.credit[p] == 0 {
			continue
		}
		var ts []ha.Tuple
		rest := h.queue[:0]
		for _, x := range h.queue {
			if x.port == p && len(ts) < h.credit[p] {
				ts = append(ts, x.t)
			} else {
				rest = append(rest, x)
			}
		}
		h.queue = rest
		h.credit[p] -= len(ts)
		h.inject(p, ts)
	}
}

// inject hands held tuples to the node as if they arrived now from the
// current upstream (they were checked against its epoch when they arrived).
func (h *hooks) inject(p uint8, ts []ha.Tuple) { h.n.Inject(int(p), ts) }

// release passes every held tuple to the node in arrival order (after a
// takeover this node decides the order itself).
func (h *hooks) release() {
	q := h.queue
	h.queue = nil
	for len(q) > 0 {
		p := q[0].port
		i := 0
		var ts []ha.Tuple
		for i < len(q) && q[i].port == p {
			ts = append(ts, q[i].t)
			i++
		}
		q = q[i:]
		h.credit[p] = max(0, h.credit[p]-len(ts))
		h.inject(p, ts)
	}
}

func (h *hooks) noteLog() {
	n := h.n
	if n.IsPrimary() || !n.IsReceiver() {
		return
	}
	if l := int64(n.OutputLen()); l > h.stats.SecondaryLogPeak {
		h.stats.SecondaryLogPeak = l
	}
}
