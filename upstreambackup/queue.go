package upstreambackup

import (
	"time"

	"github.com/streamha/streamha/ha"
)

func (h *hooks) onAck(m *ha.Message) {
	n := h.n
	if !h.fromDownstream(m) {
		return
	}
	// The ack must be about our own numbering: the acknowledger's view of
	// our epoch must be current, and it cannot acknowledge unsent tuples.
	ep, l0, err := decodeAck(m.Body)
	if err != nil || ep != n.Epoch() || max(m.Seq, l0) > n.OutputSeq() {
		return
	}
	h.l0 = max(h.l0, m.Seq, l0) // level 1 implies level 0
	if m.Level >= 1 && m.Seq > h.l1 {
		h.l1 = m.Seq
		h.st.level1Advances++
		h.trim(m.Seq)
	}
}

// trim drops queued tuples with seq ≤ upTo, raising the queue floor to the
// largest event time dropped; it returns how many it dropped.
func (h *hooks) trim(upTo uint64) int {
	n := h.n
	k := n.OutputIndex(upTo + 1)
	if k == 0 {
		return 0
	}
	if h.order.inOrderFrom(n.OutputAt(0).Seq) {
		// The last tuple dropped has the largest time of all dropped so
		// far: reading it spares a scan of the dropped tuples, cold memory
		// in cluster mode.
		h.logFloor = floor{t: n.OutputAt(k - 1).Time, ok: true}
	} else {
		for i := range k {
			if t := n.OutputAt(i).Time; !h.logFloor.ok || t > h.logFloor.t {
				h.logFloor = floor{t: t, ok: true}
			}
		}
	}
	n.TrimOutput(upTo)
	for len(h.ages) > 1 && h.ages[1].seq <= upTo+1 {
		h.ages = h.ages[1:]
	}
	return k
}

// Output tracks the queue and applies the retention bound.
func (h *hooks) Output(t *ha.Tuple) {
	n := h.n
	h.order.note(t.Seq, t.Time)
	if h.maxAge > 0 {
		// Ages are only needed for max_age; on a real clock every tuple has
		// its own time, so recording them always cost a mark per tuple.
		if now := n.Now(); len(h.ages) == 0 || h.ages[len(h.ages)-1].at != now {
			h.ages = append(h.ages, ageMark{seq: t.Seq, at: now})
		}
	}
	q := n.OutputLen()
	if int64(q) > h.peak {
		h.peak = int64(q)
		h.st.peak, h.st.peakAt = h.peak, n.Now()
	}
	if mx := h.maxTuples; mx > 0 && q >= mx {
		// Trim in chunks of 1/16 of the bound so the queue never exceeds it
		// and trims stay rare.
		drop := q - mx + max(1, mx/16)
		h.st.retentionDrops += int64(h.trim(n.OutputAt(drop - 1).Seq))
	}
	if h.maxAge > 0 {
		h.enforceAge(true)
	}
}

// enforceAge drops queued tuples older than max_age. With slack it waits
// until the oldest is 1/16 of max_age past the bound, so trims stay rare.
func (h *hooks) enforceAge(slack bool) {
	age := h.maxAge
	if age <= 0 || len(h.ages) == 0 {
		return
	}
	cutoff := h.n.Now() - age
	if slack {
		cutoff -= age / 16
	}
	if h.ages[0].at >= cutoff {
		return
	}
	cutoff = h.n.Now() - age
	i := 0
	for i+1 < len(h.ages) && h.ages[i+1].at < cutoff {
		i++
	}
	upTo := h.n.OutputSeq()
	if i+1 < len(h.ages) {
		upTo = h.ages[i+1].seq - 1
	}
	h.st.retentionDrops += int64(h.trim(upTo))
	if i+1 == len(h.ages) {
		h.ages = nil
	}
}

// onResume runs on the upstream when a new primary asks for the replay:
// it first tells it the floor of the queue about to be replayed.
func (h *hooks) onResume(m *ha.Message) {
	if !h.fromDownstream(m) || m.Type == ha.ResumeRepairType {
		return // a gap repair restarts nothing: no floor to apply
	}
	h.n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgReplayFloor, Stream: h.outPort, Body: encodeFloors(h.logFloor)})
	if h.told.ok && !h.n.Planted().Has(ha.PlantLostIncomplete) {
		// A downstream that restarted too (adjacent failures) replays this
		// node's queue from its start: the incomplete bound told to its
		// failed predecessor must precede the replay, or the rebuilt
		// windows' partial results reach the sink a second time.
		h.n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgIncomplete, Stream: h.outPort, Body: encodeFloors(h.told)})
	}
}

// onFloor records our upstream's queue floor and forgets remembered ids
// that no replay can bring back.
func (h *hooks) onFloor(m *ha.Message) {
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 2)
	if err != nil {
		return
	}
	if fs[0].ok {
		h.upFloor[p] = fs[0]
	}
	if mem := h.mem[p]; mem != nil && fs[1].ok {
		mem.forget(fs[1].t)
	}
}

// onReplayFloor runs on a new primary: windows starting at or before the
// floor of the replayed queue cannot be rebuilt completely, so a windowed
// fragment tells its downstream to drop them.
func (h *hooks) onReplayFloor(m *ha.Message) {
	n := h.n
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 1)
	if err != nil || !fs[0].ok {
		return
	}
	h.upFloor[p] = fs[0]
	if !h.windowed {
		return
	}
	to := n.Route(n.DownstreamFrag()).Primary
	if !h.told.ok || fs[0].t > h.told.t {
		h.told = fs[0]
	}
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: msgIncomplete, Stream: h.outPort, Body: encodeFloors(fs[0])})
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: to, Seq: uint64(p),
		Note: "upstream-backup: window results starting at or before " + time.Duration(fs[0].t).String() + " are incomplete after the replay"})
}

// onIncomplete records the incomplete-window bound of a new upstream primary.
func (h *hooks) onIncomplete(m *ha.Message) {
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 1)
	if err != nil || !fs[0].ok {
		return
	}
	if !h.dropWin[p].ok || fs[0].t > h.dropWin[p].t {
		h.dropWin[p] = fs[0]
	}
	h.syncInputHook()
}
