package upstreambackup

import (
	"github.com/streamha/streamha/ha"
)

// horizon is the oldest event time any operator's state depends on.
func (h *hooks) horizon() (int64, bool) {
	var (
		oldest int64
		has    bool
	)
	for _, op := range h.n.Ops() {
		hz, ok := op.(ha.Horizon)
		if !ok {
			continue
		}
		if t, ok := hz.Oldest(); ok && (!has || t < oldest) {
			oldest, has = t, true
		}
	}
	return oldest, has
}

// ackInputs sends the level-0 acks and the level-1 acks whose derived
// outputs the downstream has received.
func (h *hooks) ackInputs() {
	n := h.n
	hz, has := h.horizon()
	for p := 0; p < n.Inputs(); p++ {
		var l0 uint64 // the level-0 point to send, 0 = none
		if s := n.InputSeq(p); s > h.sentL0[p] {
			l0 = s
		}
		var (
			cut uint64
			ok  bool
		)
		if has {
			cut, ok = h.times[p].cut(hz)
		} else {
			cut, ok = h.lastInput(p)
		}
		last := h.sentL1[p]
		if k := len(h.pending[p]); k > 0 {
			last = h.pending[p][k-1].cut
		}
		if ok && cut > last {
			// Every output derived from inputs up to cut has been emitted:
			// they no longer affect any state.
			h.pending[p] = append(h.pending[p], pend{cut: cut, out: n.OutputSeq()})
		}
		rel := -1
		for i, e := range h.pending[p] {
			if e.out <= h.l0 {
				rel = i
			}
		}
		if rel < 0 {
			if l0 > 0 && h.sendAck(p, l0, 0, 0) {
				h.sentL0[p] = l0
			}
			continue
		}
		// One message carries both levels.
		cut = h.pending[p][rel].cut
		if h.sendAck(p, cut, 1, l0) {
			h.sentL1[p] = cut
			h.sentL0[p] = max(h.sentL0[p], l0)
			// In place: slicing off the front left the next append no room,
			// an allocation in nearly every round.
			h.pending[p] = append(h.pending[p][:0], h.pending[p][rel+1:]...)
			h.times[p].drop(cut)
		}
	}
}

// lastInput is the last input seq of port p that is not yet released at
// level 1, and whether there is one. Without a Horizon operator the node
// records no input times: no state depends on any input, so the node's
// input position serves.
func (h *hooks) lastInput(p int) (uint64, bool) {
	if h.records {
		return h.times[p].lastSeq()
	}
	s := h.n.InputSeq(p)
	return s, s > h.sentL1[p]
}

// unreleased reports whether port p has inputs not yet released at level 1.
func (h *hooks) unreleased(p int) bool {
	if h.records {
		return h.times[p].size() > 0
	}
	return h.n.InputSeq(p) > h.sentL1[p]
}

// sendAck sends a KindAck of the given level up to seq to the upstream of
// port p, carrying the level-0 point l0 too when it is beyond seq; false
// when that upstream is known to be down.
func (h *hooks) sendAck(p int, seq uint64, level uint8, l0 uint64) bool {
	n := h.n
	to := n.Upstream(p)
	if to == "" || n.Down(to) {
		return false
	}
	var epoch uint64
	if up := n.Frag() - 1; up >= 0 {
		epoch = n.Route(up).Epoch
	}
	if l0 <= seq {
		l0 = 0
	}
	n.Send(to, &ha.Message{Kind: ha.KindAck, Stream: uint8(p), Seq: seq, Level: level, Body: encodeAck(epoch, l0)})
	h.st.acks++
	return true
}

// sendsFloors reports whether the ack rounds carry queue floors: floors
// only bound the dedup memories (onFloor), so without dedup none are sent.
func (h *hooks) sendsFloors() bool { return h.cfg.Dedup }

// sendFloors tells the downstream primary the floor of our queue and the
// relayed floor of our upstreams' queues, when they changed.
func (h *hooks) sendFloors() {
	if !h.sendsFloors() {
		return
	}
	n := h.n
	relay := floor{}
	if !n.IsSource() {
		relay = minFloor(h.upFloor[:n.Inputs()])
	}
	if !h.floorDirty && h.logFloor == h.sentOwn && relay == h.sentRelay {
		return
	}
	if !h.logFloor.ok && !relay.ok {
		h.floorDirty = false
		return
	}
	to := n.Route(n.DownstreamFrag()).Primary
	if n.Down(to) {
		return
	}
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: msgFloor, Stream: h.outPort, Body: encodeFloors(h.logFloor, relay)})
	h.sentOwn, h.sentRelay, h.floorDirty = h.logFloor, relay, false
}
