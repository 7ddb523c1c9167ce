package passivestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// retryDelay is how long a primary waits before retrying a checkpoint
// postponed because tuples were waiting for replayed decisions.
const retryDelay = time.Millisecond

// primaryState is a fragment primary's: its term, its backup, the
// checkpoint in progress and the interleaving decisions it shipped.
type primaryState struct {
	gen         int // term as primary; timers of older terms are ignored
	backup      string
	ckID        uint64     // id of the last checkpoint captured
	sinceFull   int        // checkpoints captured since the last full one
	ckSize      [2]int     // bytes of the last incremental and the last full checkpoint
	logScratch  []ha.Tuple // the output log copied for the checkpoint being encoded
	forceFull   bool
	serializing *outgoing      // captured, waiting to leave (sync mode)
	inflight    *outgoing      // sent, waiting for the backup's acknowledgement
	prevOutSeq  uint64         // output seq of the previous checkpoint
	decisions   uint64         // decisions recorded so far in this term
	decLog      ha.DecisionLog // the latest shipped decisions, kept to resend
	decAcked    uint64         // decisions the backup holds (output commit)
	waits       []commitWait
	holdUntil   time.Duration // output commit holds until then after a failed backup (failedbackup.go)
	recording   bool
	interval    time.Duration
	cost        time.Duration // smoothed checkpoint cost (auto)
	retrying    bool
}

// outgoing is a checkpoint captured by the primary, until acknowledged.
type outgoing struct {
	id        uint64
	decisions uint64 // decisions made before the checkpoint (it covers their effects)
	full      bool
	in        []uint64
	body      []byte
	to        string
	captured  time.Duration
	sent      time.Duration
}

// commitWait is an output that waits for the backup to hold the
// decisions it depends on: the first need of them.
type commitWait struct{ seq, need uint64 }

// commit lets output seq leave once the backup holds every decision made
// before it (output commit, ha.Node.GateOutput): a successor then rebuilds
// exactly the outputs the downstream has, whenever the primary fails —
// right after sending, or after a pause past the detector's timeout, when
// the successor has taken over and acknowledges nothing more.
func (h *hooks) commit(seq uint64) {
	if h.backup == "" {
		return // no gate without a backup (chooseBackup)
	}
	need := h.decisions + uint64(h.n.RecordedDecisions())
	if len(h.waits) == 0 && need <= h.decAcked && !h.holding() {
		h.n.ReleaseOutput(seq)
		return
	}
	if k := len(h.waits) - 1; k >= 0 && h.waits[k].need == need {
		h.waits[k].seq = seq
		return
	}
	h.waits = append(h.waits, commitWait{seq, need})
}

// decisionsHeld notes that the backup holds the first d decisions and
// releases the outputs that depend on no later ones.
func (h *hooks) decisionsHeld(d uint64) {
	if d <= h.decAcked {
		return
	}
	h.decAcked = d
	if h.holding() {
		return // endHold releases them (failedbackup.go)
	}
	k := 0
	for k < len(h.waits) && h.waits[k].need <= d {
		k++
	}
	if k > 0 {
		h.n.ReleaseOutput(h.waits[k-1].seq)
		h.waits = h.waits[k:]
	}
}

// becomePrimary starts a term as primary: choose a backup, send it a full
// checkpoint at once and arm the checkpoint timer.
func (h *hooks) becomePrimary() {
	n := h.n
	h.gen++
	h.serializing, h.inflight = nil, nil
	h.decisions = 0
	h.decLog.Reset()
	h.decAcked, h.waits = 0, nil
	h.recording = h.cfg.LogNondeterminism && n.Inputs() > 1
	n.TakeOrderLog()
	n.RecordOrder(h.recording)
	if h.interval == 0 {
		h.interval = h.cfg.Interval
		if h.cfg.Auto {
			h.interval = initialAutoInterval
		}
	}
	if h.recording && h.cfg.OrderInterval > 0 {
		n.SetTimer(h.cfg.OrderInterval, timerName(timerOrder, h.gen))
	}
	h.chooseBackup("")
	h.schedule()
}

// chooseBackup picks the next live host after this one in the fragment's
// takeover order (wrapping around), announces it to the fragment and sends
// it a full checkpoint.
func (h *hooks) chooseBackup(why string) {
	n := h.n
	hosts := n.Topology().Frags[n.Frag()].Hosts
	me := slices.Index(hosts, n.Host())
	next := ""
	for i := 1; i < len(hosts); i++ {
		c := hosts[(me+i)%len(hosts)]
		if !n.Down(c) {
			next = c
			break
		}
	}
	old := h.backup
	h.backup = next
	h.serializing, h.inflight = nil, nil
	if h.recording {
		// Output waits for the decisions to reach a backup; with none
		// left, nothing can be gained by waiting. A new backup holds no
		// decision until its first checkpoint is acknowledged.
		if next == "" && !h.holding() {
			h.waits = nil
		}
		if next != old {
			h.decAcked = 0
		}
		n.GateOutput(next != "" || h.holding())
	}
	if why != "" || next == "" {
		note := fmt.Sprintf("new backup %s", next)
		if next == "" {
			note = "no live host left to be the backup: running unprotected"
		}
		if why != "" {
			note = why + ": " + note
		}
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: next, Note: note})
	}
	for _, o := range hosts {
		if o != n.Host() && !n.Down(o) {
			n.Send(o, &ha.Message{Kind: ha.KindStrategy, Type: typeBackup, Body: []byte(next)})
		}
	}
	if next != "" && (next != old || old == "") {
		h.checkpoint(true)
	}
}

// schedule arms the checkpoint timer at the next multiple of the interval.
func (h *hooks) schedule() {
	now := h.n.Now()
	next := (now/h.interval + 1) * h.interval
	h.n.SetTimer(next-now, timerName(timerCheckpoint, h.gen))
}

// ackTimeout is how long an unacknowledged checkpoint blocks the next one;
// after it the acknowledgement (or the checkpoint) is presumed lost.
func (h *hooks) ackTimeout() time.Duration { return max(time.Second, 5*h.interval) }

// periodic is the checkpoint timer.
func (h *hooks) periodic() {
	defer h.schedule()
	if h.inflight != nil {
		if h.n.Now()-h.inflight.sent < h.ackTimeout() {
			return // the previous checkpoint is still being transferred
		}
		h.n.Trace(ha.Event{Kind: ha.EvNote, Peer: h.inflight.to, Seq: h.inflight.id,
			Note: "checkpoint not acknowledged in time: sending a full one"})
		h.inflight, h.forceFull = nil, true
	}
	full := h.forceFull || !h.cfg.Incremental || h.sinceFull+1 >= h.cfg.FullEvery
	h.checkpoint(full)
}

// checkpoint captures a checkpoint and sends it to the backup (after its
// serialisation time in sync mode).
func (h *hooks) checkpoint(full bool) {
	n := h.n
	if h.backup == "" || h.serializing != nil || h.retrying {
		h.forceFull = h.forceFull || full
		return
	}
	if h.n.Pending() > 0 {
		// Tuples accepted but not processed yet (they wait for replayed
		// decisions) are counted in the input positions but not in the
		// state: wait until they are processed.
		h.forceFull = h.forceFull || full
		h.retrying = true
		n.SetTimer(retryDelay, timerName(timerRetry, h.gen))
		return
	}
	if !h.cfg.Incremental {
		full = true
	}
	// Decisions made before this checkpoint leave before it.
	h.shipDecisions()
	ck, err := h.capture(full)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: fmt.Sprintf("checkpoint %d not taken: %v", h.ckID, err)})
		h.forceFull = true
		return
	}
	size := &h.ckSize[0]
	if full {
		size = &h.ckSize[1]
	}
	body, err := encodeCheckpoint(ck, *size+*size/8)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: err.Error()})
		h.forceFull = true
		return
	}
	*size = len(body)
	kind := "incremental"
	if full {
		kind = "full"
		h.sinceFull = 0
		h.forceFull = false
	} else {
		h.sinceFull++
	}
	h.prevOutSeq = ck.OutSeq
	o := &outgoing{id: ck.ID, decisions: ck.Decisions, full: full, in: ck.In, body: body, to: h.backup, captured: n.Now()}
	n.Trace(ha.Event{Kind: ha.EvCheckpointBeg, Peer: h.backup, Seq: ck.ID, N: int64(len(body)), Note: kind})
	if h.cfg.Async {
		h.serializing = o
		h.send()
		return
	}
	// The primary pauses while it serialises; the checkpoint leaves when
	// the serialisation is done (the timer runs once the CPU is free).
	n.Work(0, len(body))
	h.serializing = o
	n.SetTimer(0, timerName(timerSend, h.gen))
}

// capture builds the checkpoint of the node's current state. Its Log is
// scratch space the next capture overwrites: encode the checkpoint first.
func (h *hooks) capture(full bool) (*checkpoint, error) {
	n := h.n
	h.ckID++
	ck := &checkpoint{ID: h.ckID, OutSeq: n.OutputSeq(), Decisions: h.decisions}
	if !full {
		ck.Base = h.ckID - 1
	}
	for p := 0; p < n.Inputs(); p++ {
		ck.In = append(ck.In, n.InputSeq(p))
	}
	for i, op := range n.Ops() {
		var st opState
		var err error
		if inc, ok := op.(ha.Incremental); ok && !full {
			st.Kind = stateDelta
			st.Data, err = inc.SnapshotDelta()
		} else {
			st.Data, err = op.Snapshot()
		}
		if err != nil {
			return nil, fmt.Errorf("operator %d (%s): %w", i, op.Name(), err)
		}
		ck.Ops = append(ck.Ops, st)
	}
	ck.LogTrim = n.OutputSeq()
	if n.OutputLen() > 0 {
		ck.LogTrim = n.OutputAt(0).Seq - 1
	}
	from := 0
	if !full {
		from = n.OutputIndex(h.prevOutSeq + 1)
	}
	h.logScratch = n.AppendOutput(h.logScratch[:0], from, n.OutputLen())
	ck.Log = h.logScratch
	return ck, nil
}

// send lets the serialised checkpoint leave for the backup.
func (h *hooks) send() {
	o := h.serializing
	h.serializing = nil
	if o == nil || o.to != h.backup {
		return
	}
	n := h.n
	o.sent = n.Now()
	n.AddCheckpointBytes(len(o.body))
	n.Send(o.to, &ha.Message{Kind: ha.KindStrategy, Type: typeCheckpoint, Seq: o.id, Body: o.body})
	h.inflight = o
}

// onCkptAck relays the coverage of an acknowledged checkpoint upstream and,
// with auto, updates the interval from the measured cost.
func (h *hooks) onCkptAck(m *ha.Message) {
	n := h.n
	o := h.inflight
	if !n.IsPrimary() || o == nil || m.From != o.to || m.Seq != o.id {
		return
	}
	h.inflight = nil
	if h.recording {
		h.decisionsHeld(o.decisions)
	}
	for p, seq := range o.in {
		up := n.Upstream(p)
		if seq > 0 && up != "" && !n.Down(up) {
			n.Send(up, &ha.Message{Kind: ha.KindAck, Stream: uint8(p), Seq: seq, Level: AckLevelCheckpoint})
		}
	}
	if h.cfg.Auto {
		c := n.Now() - o.captured
		if h.cost == 0 {
			h.cost = c
		} else {
			h.cost = (h.cost + c) / 2
		}
		h.interval = YoungInterval(h.cost, h.cfg.MTBF)
		h.s.chosen[h.fragName()] = h.interval
		h.s.cost[h.fragName()] = h.cost
	}
}

// onNeedFull answers a backup that cannot apply an incremental checkpoint.
func (h *hooks) onNeedFull(m *ha.Message) {
	if !h.n.IsPrimary() || m.From != h.backup {
		return
	}
	if h.inflight != nil && h.inflight.id == m.Seq {
		wasFull := h.inflight.full
		h.inflight = nil
		if wasFull {
			// A full checkpoint was rejected (damaged on the way, say):
			// the next one goes at the next tick, not at once, so a link
			// that keeps damaging them cannot start a checkpoint storm.
			h.forceFull = true
			return
		}
	}
	h.checkpoint(true)
}

// shipDecisions sends the interleaving decisions recorded since the last
// shipment to the backup.
func (h *hooks) shipDecisions() {
	if !h.recording {
		return
	}
	d := h.n.TakeOrderLog()
	if len(d) == 0 {
		return
	}
	if h.backup != "" {
		h.n.Send(h.backup, &ha.Message{Kind: ha.KindStrategy, Type: typeOrder, Seq: h.decisions, Body: d})
	}
	h.decisions += uint64(len(d))
	h.decLog.Keep(d)
}

// onOrderNack resends the decisions the backup lost, or, when they are no
// longer kept, a full checkpoint, which covers their effects.
func (h *hooks) onOrderNack(m *ha.Message) {
	n := h.n
	if !n.IsPrimary() || m.From != h.backup || m.Seq >= h.decisions {
		return
	}
	d, ok := h.decLog.Since(m.Seq)
	if !ok {
		h.checkpoint(true)
		return
	}
	n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: typeOrder, Seq: m.Seq, Body: d})
}
