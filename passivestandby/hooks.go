package passivestandby

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// Strategy message types (KindStrategy).
const (
	// typeCheckpoint: primary → backup; Body is an encoded checkpoint.
	typeCheckpoint = "ps.ckpt"
	// typeCkptAck: backup → primary; Seq is the checkpoint id now held.
	typeCkptAck = "ps.ckpt-ack"
	// typeNeedFull: backup → primary; an incremental checkpoint's base is
	// missing (or a checkpoint could not be applied): send a full one.
	typeNeedFull = "ps.need-full"
	// typeBackup: primary → every other host of its fragment; Body is the
	// name of the primary's backup ("" when it has none).
	typeBackup = "ps.backup"
	// typeOrder: primary → backup; Seq is the index of the first decision
	// in Body, one input port per byte.
	typeOrder = "ps.order"
	// typeOrderAck: backup → primary; Seq is the number of decisions the
	// backup holds without a gap (outputs that depend on no later ones may
	// leave the primary).
	typeOrderAck = "ps.order-ack"
	// typeOrderNack: backup → primary; decision messages were lost: Seq is
	// the index of the first decision the backup misses.
	typeOrderNack = "ps.order-nack"
)

// AckLevelCheckpoint is the KindAck level passive standby uses: the
// acknowledged tuples are covered by a checkpoint held by a backup (or, from
// the sink, were received).
const AckLevelCheckpoint uint8 = 2

// Timer names; the primary's timers carry a generation so that a chain
// armed in an earlier term as primary dies out.
const (
	timerCheckpoint = "ps.ckpt"
	timerSend       = "ps.send"
	timerOrder      = "ps.order"
	timerSinkAck    = "ps.sink-ack"
	timerRetry      = "ps.retry"
)

// retryDelay is how long a primary waits before retrying a checkpoint
// postponed because tuples were waiting for replayed decisions.
const retryDelay = time.Millisecond

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

// hooks is one node's passive-standby behaviour. Sources trim on
// acknowledgements; the sink acknowledges; fragment hosts are primary or
// backup (or idle spares).
type hooks struct {
	ha.NopHooks
	n   *ha.Node
	s   *Strategy
	cfg Config

	// ---- primary ----
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
	recording   bool
	interval    time.Duration
	cost        time.Duration // smoothed checkpoint cost (auto)
	retrying    bool

	// ---- backup (any fragment host) ----
	held        *held
	backupOf    map[string]string // primary → its announced backup
	decFrom     string            // primary whose decisions dec holds
	decStart    uint64            // index of dec[0]
	dec         []uint8
	nackedAt    uint64        // the gap start last asked for
	nackTime    time.Duration // when it was asked for
	fullAskedAt time.Duration // when decisions without their checkpoint last asked for one

	// ---- upstream of a new primary ----
	replayedTo    string
	replayedEpoch uint64

	// ---- sink ----
	ackedSeq uint64
	ackedTo  string
}

func (h *hooks) isFragHost() bool { return h.n.Frag() >= 0 && !h.n.IsSink() }

func (h *hooks) fragName() string { return h.n.Topology().Frags[h.n.Frag()].Name }

// Start sets retention everywhere, starts the sink's acknowledgements and
// the initial primaries' checkpointing.
func (h *hooks) Start() {
	n := h.n
	n.SetRetain(!n.IsSink())
	switch {
	case n.IsSink():
		n.SetTimer(h.cfg.AckInterval, timerSinkAck)
	case h.isFragHost() && n.IsPrimary():
		h.becomePrimary()
	}
}

func timerName(base string, gen int) string { return base + "#" + strconv.Itoa(gen) }

func parseTimer(name string) (string, int, bool) {
	base, g, ok := strings.Cut(name, "#")
	if !ok {
		return name, 0, false
	}
	gen, err := strconv.Atoi(g)
	return base, gen, err == nil
}

// Timer dispatches the strategy's timers.
func (h *hooks) Timer(name string) {
	n := h.n
	if name == timerSinkAck {
		h.sinkAck()
		n.SetTimer(h.cfg.AckInterval, timerSinkAck)
		return
	}
	base, gen, ok := parseTimer(name)
	if !ok || gen != h.gen || !n.IsPrimary() {
		return
	}
	switch base {
	case timerCheckpoint:
		h.periodic()
	case timerSend:
		h.send()
	case timerRetry:
		h.retrying = false
		h.checkpoint(h.forceFull)
	case timerOrder:
		h.shipDecisions()
		n.SetTimer(h.cfg.OrderInterval, timerName(timerOrder, h.gen))
	}
}

// Message handles acknowledgements and the strategy's own messages.
func (h *hooks) Message(m *ha.Message) bool {
	switch m.Kind {
	case ha.KindAck:
		h.onAck(m)
		return true
	case ha.KindResume:
		// A takeover's first resume is answered by the replay sent when the
		// route changed; a repeated one (that replay was lost) and a gap
		// repair are answered by the node.
		if m.Type == "" && m.Frag == h.n.DownstreamFrag() && m.From == h.replayedTo && m.Epoch == h.replayedEpoch &&
			m.From == h.n.Route(m.Frag).Primary {
			h.replayedTo = ""
			return true
		}
		return false
	case ha.KindStrategy:
	default:
		return false
	}
	if !h.isFragHost() || m.Frag != h.n.Frag() || h.n.Stale(m) {
		return strings.HasPrefix(m.Type, "ps.")
	}
	switch m.Type {
	case typeCheckpoint:
		h.onCheckpoint(m)
	case typeCkptAck:
		h.onCkptAck(m)
	case typeNeedFull:
		h.onNeedFull(m)
	case typeBackup:
		b := string(m.Body)
		if m.From == h.n.Route(h.n.Frag()).Primary &&
			(b == "" || slices.Contains(h.n.Topology().Frags[h.n.Frag()].Hosts, b)) {
			// A name that is no host of the fragment (damaged in transit)
			// is ignored: believing it would stop every host from taking over.
			h.backupOf[m.From] = b
		}
	case typeOrder:
		h.onOrder(m)
	case typeOrderNack:
		h.onOrderNack(m)
	case typeOrderAck:
		if h.n.IsPrimary() && m.From == h.backup {
			h.decisionsHeld(m.Seq)
		}
	default:
		return false
	}
	return true
}

// Output ships the decisions behind an output before it leaves.
func (h *hooks) Output(t *ha.Tuple) {
	if !h.recording {
		return
	}
	if h.cfg.OrderInterval == 0 {
		h.shipDecisions()
	}
	h.commit(t.Seq)
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
	if len(h.waits) == 0 && need <= h.decAcked {
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
	k := 0
	for k < len(h.waits) && h.waits[k].need <= d {
		k++
	}
	if k > 0 {
		h.n.ReleaseOutput(h.waits[k-1].seq)
		h.waits = h.waits[k:]
	}
}

// PeerDown replaces a failed backup and takes over from a failed primary.
func (h *hooks) PeerDown(host string) {
	if !h.isFragHost() {
		return
	}
	if h.n.IsPrimary() && host == h.backup {
		h.chooseBackup(fmt.Sprintf("backup %s failed", host))
	}
}

// PeerUp re-announces the backup to a host of the fragment that comes back
// (so a backup dismissed while unreachable learns it), and gives a primary
// without backup a new one.
func (h *hooks) PeerUp(host string) {
	n := h.n
	if !h.isFragHost() || !n.IsPrimary() {
		return
	}
	if !slices.Contains(n.Topology().Frags[n.Frag()].Hosts, host) {
		return
	}
	if h.backup == "" {
		h.chooseBackup(fmt.Sprintf("%s is alive again", host))
		return
	}
	n.Send(host, &ha.Message{Kind: ha.KindStrategy, Type: typeBackup, Body: []byte(h.backup)})
}

// RouteChanged replays the retained output to a new downstream primary at
// once, and ends the duties of a primary that was superseded.
func (h *hooks) RouteChanged(old, r ha.Route) {
	n := h.n
	if r.Frag == n.DownstreamFrag() && !n.IsSink() && r.Primary != old.Primary && n.IsPrimary() {
		// The new primary's resume request follows the route on the same
		// link, but output emitted in between would reach it before the
		// replay and be taken as a gap. Replaying everything retained now
		// (it drops by seq what its checkpoint covers) closes that window;
		// the resume request that follows is then answered already.
		n.Replay(r.Primary, 0)
		h.replayedTo, h.replayedEpoch = r.Primary, r.Epoch
	}
	if !h.isFragHost() || r.Frag != n.Frag() {
		return
	}
	if old.Primary == n.Host() && r.Primary != n.Host() {
		h.gen++ // stop this term's timers
		h.serializing, h.inflight, h.backup = nil, nil, ""
		h.recording = false
		n.RecordOrder(false)
		h.waits = nil
		n.GateOutput(false)
	}
}

// ---- sources, sink and trimming ----

// onAck trims the output queue up to what the downstream's checkpoint (or
// the sink) covers.
func (h *hooks) onAck(m *ha.Message) {
	n := h.n
	if n.IsSink() || !n.IsPrimary() || n.Stale(m) {
		return
	}
	if m.Frag != n.DownstreamFrag() || m.From != n.Route(m.Frag).Primary {
		return
	}
	n.TrimOutput(m.Seq)
}

// sinkAck acknowledges what the sink received to the last fragment's primary.
func (h *hooks) sinkAck() {
	n := h.n
	seq, to := n.InputSeq(0), n.Upstream(0)
	if seq == 0 || (seq == h.ackedSeq && to == h.ackedTo) || n.Down(to) {
		return
	}
	n.Send(to, &ha.Message{Kind: ha.KindAck, Seq: seq, Level: AckLevelCheckpoint})
	h.ackedSeq, h.ackedTo = seq, to
}

// ---- primary ----

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
		if next == "" {
			h.waits = nil
		}
		if next != old {
			h.decAcked = 0
		}
		n.GateOutput(next != "")
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

// ---- backup ----

// onCheckpoint applies a fully received checkpoint from the primary to this
// host's operators and keeps its positions and output for a takeover.
func (h *hooks) onCheckpoint(m *ha.Message) {
	n := h.n
	if n.IsPrimary() || m.From != n.Route(n.Frag()).Primary {
		return
	}
	if !n.Planted().Has(ha.PlantAnnounceOnce) {
		// A checkpoint names this host the primary's backup: the one
		// announcement saying so (typeBackup) may have been lost, and
		// the other hosts, told, would each wait for this one to take
		// over while it waited for the host it last heard of.
		h.backupOf[m.From] = n.Host()
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
	case b == n.Host() && h.held != nil && h.held.from == prim:
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
