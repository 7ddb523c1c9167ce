package passivestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// backupState is any fragment host's as a (possible) backup: the
// checkpoint it holds, the backups the primaries announced, and the
// interleaving decisions that follow the checkpoint.
type backupState struct {
	held        *held
	backupOf    map[string]string // primary → its announced backup
	decFrom     string            // primary whose decisions dec holds
	decStart    uint64            // index of dec[0]
	dec         []uint8
	nackedAt    uint64        // the gap start last asked for
	nackTime    time.Duration // when it was asked for
	fullAskedAt time.Duration // when decisions without their checkpoint last asked for one
}

// held is the latest complete checkpoint a backup holds.
type held struct {
	from      string
	id        uint64
	in        []uint64
	outSeq    uint64
	decisions uint64
	log       []ha.Tuple
	bytes     int
}

// onCheckpoint applies a fully received checkpoint from the primary to this
// host's operators and keeps its positions and output for a takeover.
func (h *hooks) onCheckpoint(m *ha.Message) {
	n := h.n
	if n.IsPrimary() || m.From != n.Route(n.Frag()).Primary {
		return
	}
	n.Work(0, len(m.Body)) // deserialisation
	ck, err := decodeCheckpoint(m.Body)
	if err != nil {
		// Nothing was applied: the previous good checkpoint (if any) stays.
		h.reject(m, fmt.Sprintf("checkpoint %d from %s unusable: %v; %s", m.Seq, m.From, err, h.keeping()))
		return
	}
	if len(ck.Ops) != len(n.Ops()) || len(ck.In) != n.Inputs() {
		h.reject(m, fmt.Sprintf("checkpoint %d from %s has %d operator states and %d inputs, want %d and %d",
			ck.ID, m.From, len(ck.Ops), len(ck.In), len(n.Ops()), n.Inputs()))
		return
	}
	prev := h.held
	if !ck.Full() && (prev == nil || prev.from != m.From || prev.id != ck.Base) {
		h.reject(m, fmt.Sprintf("incremental checkpoint %d from %s needs checkpoint %d", ck.ID, m.From, ck.Base))
		return
	}
	// undo holds each operator's state before this checkpoint, so a
	// checkpoint that fails half-way can be rolled back to the previous one.
	// With nothing held there is nothing to roll back to, so the O(state)
	// snapshots are taken only when a previous checkpoint is held.
	var undo [][]byte
	for i, op := range n.Ops() {
		st := ck.Ops[i]
		if prev != nil {
			before, err := op.Snapshot()
			if err != nil {
				h.held = nil
				h.reject(m, fmt.Sprintf("checkpoint %d from %s: snapshot operator %d before applying it: %v", ck.ID, m.From, i, err))
				return
			}
			undo = append(undo, before)
		}
		var err error
		if st.Kind == stateDelta {
			inc, ok := op.(ha.Incremental)
			if !ok {
				err = fmt.Errorf("operator %s has no incremental state", op.Name())
			} else {
				err = inc.ApplyDelta(st.Data)
			}
		} else {
			err = op.Restore(st.Data)
		}
		if err != nil {
			why := fmt.Sprintf("restore checkpoint %d from %s, operator %d: %v", ck.ID, m.From, i, err)
			if rerr := rollback(n.Ops(), undo); rerr != nil {
				// The operators are half-updated: only a full checkpoint
				// can make this host a usable backup again.
				h.held = nil
				h.reject(m, fmt.Sprintf("%s; rollback failed (%v): no usable checkpoint", why, rerr))
				return
			}
			h.reject(m, why+"; rolled back, "+h.keeping())
			return
		}
	}
	nh := &held{from: m.From, id: ck.ID, in: ck.In, outSeq: ck.OutSeq, decisions: ck.Decisions, bytes: len(m.Body)}
	if ck.Full() {
		nh.log = ck.Log
	} else {
		i := 0
		for i < len(prev.log) && prev.log[i].Seq <= ck.LogTrim {
			i++
		}
		nh.log = append(slices.Clip(prev.log[i:]), ck.Log...)
	}
	h.held = nh
	h.alignDecisions()
	n.Trace(ha.Event{Kind: ha.EvCheckpointEnd, Peer: m.From, Seq: ck.ID, N: int64(len(m.Body))})
	n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: typeCkptAck, Seq: ck.ID})
}

// reject notes why a checkpoint was not applied and asks for a full one.
func (h *hooks) reject(m *ha.Message, why string) {
	h.n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: why + ": asking for a full checkpoint"})
	h.n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: typeNeedFull, Seq: m.Seq})
}

// onOrder appends shipped decisions to the ones following the held
// checkpoint, asks again for lost ones, and acknowledges the decisions it
// holds without a gap after a checkpoint of the same primary (the primary
// releases the outputs that depend on them).
func (h *hooks) onOrder(m *ha.Message) {
	n := h.n
	if n.IsPrimary() || m.From != n.Route(n.Frag()).Primary {
		return
	}
	if m.From != h.decFrom {
		h.decFrom, h.decStart, h.dec = m.From, m.Seq, nil
	}
	end := h.decStart + uint64(len(h.dec))
	switch {
	case m.Seq > end:
		h.askDecisions(m.From, end)
	case m.Seq+uint64(len(m.Body)) > end:
		h.dec = append(h.dec, m.Body[end-m.Seq:]...)
	}
	h.alignDecisions()
	c := h.held
	switch {
	case c == nil || c.from != m.From:
		// Decisions without the checkpoint they follow (it was lost):
		// they are worth nothing until one arrives.
		if n.Now()-h.fullAskedAt >= ha.ResumeRetry || h.fullAskedAt == 0 {
			h.fullAskedAt = n.Now()
			n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: typeNeedFull})
		}
	case h.decStart > c.decisions:
		h.askDecisions(m.From, c.decisions)
	default:
		n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: typeOrderAck, Seq: h.decStart + uint64(len(h.dec))})
	}
}

// askDecisions asks the primary to resend its decisions from index from
// (once per ResumeRetry while they are missing). A primary that no longer
// keeps them sends a full checkpoint, which covers their effects.
func (h *hooks) askDecisions(primary string, from uint64) {
	n := h.n
	if h.nackedAt == from && n.Now()-h.nackTime < ha.ResumeRetry {
		return
	}
	if h.nackedAt != from {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: primary, Seq: from, Note: "interleaving decisions lost: asking for them again"})
	}
	h.nackedAt, h.nackTime = from, n.Now()
	n.Send(primary, &ha.Message{Kind: ha.KindStrategy, Type: typeOrderNack, Seq: from})
}

// alignDecisions drops the decisions the held checkpoint already covers.
func (h *hooks) alignDecisions() {
	c := h.held
	if c == nil || c.from != h.decFrom {
		if c != nil {
			h.decFrom, h.decStart, h.dec = c.from, c.decisions, nil
		}
		return
	}
	end := h.decStart + uint64(len(h.dec))
	switch {
	case c.decisions <= h.decStart:
	case c.decisions <= end:
		h.dec = h.dec[c.decisions-h.decStart:]
		h.decStart = c.decisions
	default:
		h.dec, h.decStart = nil, c.decisions
	}
}
