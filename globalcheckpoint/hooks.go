package globalcheckpoint

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// Strategy message types (KindStrategy).
const (
	// typeBarrier: source or fragment primary → next fragment's primary;
	// Stream is the receiver's input port, Body a barrier.
	typeBarrier = "gc.barrier"
	// typeSnap: fragment primary → store; Seq is the checkpoint id, Body a snapshot.
	typeSnap = "gc.snap"
	// typeComplete: coordinator → sources and fragment primaries; Body is a
	// barrier whose Pos is how far the receiver may trim its output.
	typeComplete = "gc.complete"
	// typeRestore: store → the host that restarts a fragment; Seq is the
	// rollback generation, Body the stored snapshot (ID 0: start empty).
	typeRestore = "gc.restore"
	// typeRestored: host → store; Seq is the generation restored.
	typeRestored = "gc.restored"
	// typeRewind: coordinator → source; Body is a barrier whose Pos is the
	// position the first fragment restarts after.
	typeRewind = "gc.rewind"

	// Orders between the coordinator and the store; Body is an order.

	// typeStored: store → coordinator: it holds fragment Vals[0]'s
	// snapshot of checkpoint ID.
	typeStored = "gc.stored"
	// typeCommit: coordinator → store: complete checkpoint ID.
	typeCommit = "gc.commit"
	// typeCommitted: store → coordinator: checkpoint ID completed; Vals
	// are the trim positions of each source, then of each fragment.
	typeCommitted = "gc.committed"
	// typeRollback: coordinator → store: start the rollback after
	// generation Gen on the targets Hosts (one per fragment).
	typeRollback = "gc.rollback"
	// typeBegun: store → coordinator: rollback Gen to checkpoint ID started
	// on Hosts; Vals are the sources' restart positions.
	typeBegun = "gc.begun"
	// typeAppoint: store → a fragment host: coordinate at Term from
	// generation Gen and checkpoint ID; Hosts[0] is the predecessor.
	typeAppoint = "gc.appoint"
	// typeFenced: store → a former coordinator: Hosts[0] coordinates at Term.
	typeFenced = "gc.fenced"
)

// Timer names.
const (
	timerBarrier = "gc.barrier"
	timerRetry   = "gc.retry"
	timerFinal   = "gc.final"
	timerRead    = "gc.read"
	timerSnap    = "gc.snap"
	timerAsk     = "gc.ask"
	timerAppoint = "gc.appoint"
	timerSettle  = "gc.settle"
)

// retryEvery is how often the store re-sends a restore or an appointment,
// and the coordinator a rollback order, that was not answered (it may
// have been lost).
const retryEvery = 100 * time.Millisecond

// pendingBarrier is a checkpoint whose barrier reached some inputs of a
// fragment but not yet the snapshot.
type pendingBarrier struct {
	id    uint64
	pos   [maxPorts]uint64
	known uint8
}

// hooks is one node's global-checkpoint behaviour: a source injects
// barriers and keeps its replay log; a fragment host snapshots and
// restores, and may coordinate (co); the sink's host is also the store (st).
type hooks struct {
	ha.NopHooks
	n   *ha.Node
	cfg Config

	// gen is the rollback generation this host last restored into.
	gen uint64
	// fragment primary: barriers seen, and the last checkpoint snapshotted
	pend      []pendingBarrier
	lastSnap  uint64
	snapArmed bool // timerSnap is set

	co *coordinator // fragment hosts only
	st *store       // the sink's host only
}

// Start implements ha.Hooks.
func (h *hooks) Start() {
	n := h.n
	switch {
	case n.IsSource():
		n.SetRetain(true) // the replay log
		h.arm()
	case n.IsSink():
	default:
		n.SetRetain(true)
	}
}

// arm sets the barrier timer at the next multiple of the interval.
func (h *hooks) arm() {
	now := h.n.Now()
	next := (now/h.cfg.Interval + 1) * h.cfg.Interval
	h.n.SetTimer(next-now, timerBarrier)
}

// Timer implements ha.Hooks.
func (h *hooks) Timer(name string) {
	switch name {
	case timerBarrier:
		h.injectBarrier()
	case timerRetry:
		h.retryRestore()
	case timerRead:
		h.sendRead()
	case timerAsk:
		h.askTimer()
	case timerAppoint:
		h.appointTimer()
	case timerSettle:
		h.settleTimer()
	case timerSnap:
		h.snapArmed = false
		h.maybeSnapshot(-1, 0)
	case timerFinal:
		h.sendBarrier(2*uint64(h.n.Now()/h.cfg.Interval) + 1)
	}
}

// Output implements ha.Hooks: a source that emitted its end-of-stream
// mark takes a final checkpoint at once (in a handler of its own, so the
// barrier follows the mark), as Flink does at the end of bounded input:
// without it a transactional sink would hold the last outputs for up to
// an interval.
func (h *hooks) Output(t *ha.Tuple) {
	if t.IsEnd() && h.n.IsSource() {
		h.n.SetTimer(0, timerFinal)
	}
}

// injectBarrier is a source's barrier: checkpoint 2 × now/interval follows
// the output emitted so far. (Odd ids are final checkpoints, taken at the
// end of the stream between two periodic ones, so that the next periodic
// checkpoint still has a newer id.) It is sent at the start of a handler, before any
// output generated later.
func (h *hooks) injectBarrier() {
	defer h.arm()
	h.sendBarrier(2 * uint64(h.n.Now()/h.cfg.Interval))
}

// sendBarrier tells the first fragment's primary that checkpoint id
// follows this source's output so far.
func (h *hooks) sendBarrier(id uint64) {
	n := h.n
	to := n.Route(0).Primary
	if n.Down(to) {
		return
	}
	port := slices.Index(n.Topology().Sources, n.Host())
	b := barrier{ID: id, Pos: n.OutputSeq()}
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: typeBarrier, Stream: uint8(port), Body: b.encode()})
}

// Message implements ha.Hooks.
func (h *hooks) Message(m *ha.Message) bool {
	if h.st != nil {
		h.storeHeard(m)
	}
	if m.Kind != ha.KindStrategy {
		return false
	}
	switch m.Type {
	case typeBarrier:
		h.onBarrier(m)
	case typeSnap:
		h.onSnap(m)
	case typeComplete:
		h.onComplete(m)
	case typeRestore:
		h.onRestore(m)
	case typeRestored:
		h.onRestored(m)
	case typeRewind:
		h.onRewind(m)
	case typeStored:
		h.onStored(m)
	case typeCommit:
		h.onCommit(m)
	case typeCommitted:
		h.onCommitted(m)
	case typeRollback:
		h.onRollback(m)
	case typeBegun:
		h.onBegun(m)
	case typeAppoint:
		h.onAppoint(m)
	case typeFenced:
		h.onFenced(m)
	default:
		return false
	}
	return true
}

// ---- fragments ----

// onBarrier records where checkpoint b.ID falls in one input and
// snapshots if every input has reached its barrier.
func (h *hooks) onBarrier(m *ha.Message) {
	n := h.n
	if n.Frag() < 0 || n.IsSink() || !n.IsPrimary() || int(m.Stream) >= n.Inputs() {
		return
	}
	b, err := decodeBarrier(m.Body)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: "barrier dropped: " + err.Error()})
		return
	}
	// A fragment's barrier belongs to the generation it was sent in; a
	// source's (generation 0) to whichever the sources feed.
	if m.From != n.Upstream(int(m.Stream)) || (n.Frag() > 0 && b.Gen != h.gen) || b.ID <= h.lastSnap {
		return
	}
	i := slices.IndexFunc(h.pend, func(p pendingBarrier) bool { return p.id == b.ID })
	if i < 0 {
		h.pend = append(h.pend, pendingBarrier{id: b.ID})
		i = len(h.pend) - 1
	}
	h.pend[i].pos[m.Stream] = b.Pos
	h.pend[i].known |= 1 << m.Stream
	h.maybeSnapshot(-1, 0)
}

// Input implements ha.InputHook: a fragment snapshots just before it
// processes the first tuple after the barrier of its last input; the sink
// of a transactional run holds what no completed checkpoint covers yet.
func (h *hooks) Input(t *ha.Tuple) bool {
	if h.st != nil {
		return h.sinkInput(t)
	}
	if len(h.pend) > 0 {
		// t's port already counts t; the state does not yet.
		h.maybeSnapshot(int(t.Stream), t.Seq-1)
		// t may be the last tuple before a barrier with nothing after it
		// yet (the end of the stream, or a barrier that overtook data
		// resent after a loss): snapshot once the handler processed it.
		if !h.snapArmed && h.ready(int(t.Stream), t.Seq) >= 0 {
			h.snapArmed = true
			h.n.SetTimer(0, timerSnap)
		}
	}
	return true
}

// maybeSnapshot snapshots the newest checkpoint whose barrier every input
// has reached. port and at override that port's position (-1: none).
func (h *hooks) maybeSnapshot(port int, at uint64) {
	n := h.n
	best := h.ready(port, at)
	if best < 0 {
		return
	}
	in := h.positions(port, at)
	id := h.pend[best].id
	h.pend = slices.DeleteFunc(h.pend, func(p pendingBarrier) bool { return p.id <= id })
	h.lastSnap = id
	h.snapshot(id, in[:n.Inputs()])
}

// positions are the input positions, with port's overridden by at (port -1: none).
func (h *hooks) positions(port int, at uint64) [maxPorts]uint64 {
	var in [maxPorts]uint64
	for p := 0; p < h.n.Inputs(); p++ {
		in[p] = h.n.InputSeq(p)
	}
	if port >= 0 {
		in[port] = at
	}
	return in
}

// ready is the index in pend of the newest checkpoint whose barrier every
// input has reached at the positions (see positions), or -1.
func (h *hooks) ready(port int, at uint64) int {
	n := h.n
	all := uint8(1)<<n.Inputs() - 1
	in := h.positions(port, at)
	best := -1
	for i, p := range h.pend {
		if p.known != all {
			continue
		}
		reached := true
		for q := 0; q < n.Inputs(); q++ {
			reached = reached && in[q] >= p.pos[q]
		}
		if reached && (best < 0 || p.id > h.pend[best].id) {
			best = i
		}
	}
	return best
}

// snapshot captures the fragment's state for checkpoint id, sends it to
// the store and forwards the barrier downstream.
func (h *hooks) snapshot(id uint64, in []uint64) {
	n := h.n
	s := &snapshot{Gen: h.gen, ID: id, Frag: uint64(n.Frag()), In: slices.Clone(in), OutSeq: n.OutputSeq()}
	for i, op := range n.Ops() {
		st, err := op.Snapshot()
		if err != nil {
			n.Trace(ha.Event{Kind: ha.EvNote, Seq: id, Note: fmt.Sprintf("checkpoint %d not taken: operator %d (%s): %v", id, i, op.Name(), err)})
			return
		}
		s.Ops = append(s.Ops, st)
	}
	if n.DownstreamFrag() == n.Topology().SinkFrag() {
		s.Log = n.AppendOutput(nil, 0, n.OutputLen())
	}
	body := s.encode()
	store := n.Topology().Sink
	n.Work(0, len(body)) // the fragment pauses to serialise
	n.AddCheckpointBytes(len(body))
	n.Trace(ha.Event{Kind: ha.EvCheckpointBeg, Peer: store, Seq: id, N: int64(len(body)),
		Note: fmt.Sprintf("input positions %v, output seq %d", s.In, s.OutSeq)})
	n.Send(store, &ha.Message{Kind: ha.KindStrategy, Type: typeSnap, Seq: id, Body: body})
	if f := n.DownstreamFrag(); f < len(n.Topology().Frags) {
		if to := n.Route(f).Primary; !n.Down(to) {
			b := barrier{Gen: h.gen, ID: id, Pos: s.OutSeq}
			n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: typeBarrier, Body: b.encode()})
		}
	}
}

// fromFragmentHost reports whether m comes from a host of a protected
// fragment: one the store may have appointed coordinator.
func (h *hooks) fromFragmentHost(m *ha.Message) bool {
	f, ok := h.n.Topology().FragOf(m.From)
	return ok && f >= 0 && f < len(h.n.Topology().Frags)
}

// onComplete trims the retained output a completed checkpoint no longer
// needs. Any coordinator's completion may be followed, a replaced one's
// too: it sends one only once the store has completed the checkpoint, and
// every later rollback restores that checkpoint or a newer one.
func (h *hooks) onComplete(m *ha.Message) {
	if !h.fromFragmentHost(m) {
		return
	}
	if b, err := decodeBarrier(m.Body); err == nil {
		h.trim(b)
	}
}

// trim trims this host's retained output up to a completed checkpoint's
// position (a fragment host only within the generation it runs in).
func (h *hooks) trim(b barrier) {
	if h.n.IsSource() || b.Gen == h.gen {
		h.n.TrimOutput(b.Pos)
	}
}

// onRestore restarts this host's fragment from the store's snapshot
// and takes over at a new epoch; the upstream then replays what follows
// the restored input positions.
func (h *hooks) onRestore(m *ha.Message) {
	n := h.n
	if m.From != n.Topology().Sink || n.Frag() < 0 || n.IsSink() {
		return
	}
	ack := &ha.Message{Kind: ha.KindStrategy, Type: typeRestored, Seq: m.Seq}
	if m.Seq <= h.gen {
		if m.Seq == h.gen && n.IsPrimary() {
			n.Send(m.From, ack) // the acknowledgement was lost
		}
		return
	}
	if e := n.Route(n.Frag()).Epoch; !n.Planted().Has(ha.PlantRollbackEpochLocal) && e > m.Seq {
		// A newer rollback restarted this fragment already (its epoch is
		// its generation): this order waited while this host was paused
		// or cut off.
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq,
			Note: fmt.Sprintf("restore of global rollback %d ignored: the fragment is at epoch %d, restarted by a newer rollback", m.Seq, e)})
		return
	}
	s, err := decodeSnapshot(m.Body)
	if err == nil && s.Frag != uint64(n.Frag()) {
		err = fmt.Errorf("snapshot of fragment %d, this host serves %d", s.Frag, n.Frag())
	}
	if err == nil && s.ID > 0 && (len(s.Ops) != len(n.Ops()) || len(s.In) != n.Inputs()) {
		err = fmt.Errorf("snapshot has %d operator states and %d inputs, want %d and %d", len(s.Ops), len(s.In), len(n.Ops()), n.Inputs())
	}
	if err == nil {
		err = n.Restart()
	}
	if err == nil && s.ID > 0 {
		for i, op := range n.Ops() {
			if err = op.Restore(s.Ops[i]); err != nil {
				err = fmt.Errorf("operator %d (%s): %w", i, op.Name(), err)
				break
			}
		}
	}
	if err != nil {
		// Nothing sensible to run: stay as it is and say why; the
		// store re-sends the restore.
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: "restore failed: " + err.Error()})
		return
	}
	if s.ID > 0 {
		for p, seq := range s.In {
			n.SetInputSeq(p, seq)
		}
		n.SetOutputSeq(s.OutSeq)
		n.SetOutputLog(s.Log)
	}
	n.Work(0, len(m.Body)) // deserialisation
	h.gen, h.pend, h.lastSnap = m.Seq, nil, s.ID
	note := fmt.Sprintf("global rollback %d: checkpoint %d, input positions %v, output seq %d", m.Seq, s.ID, s.In, s.OutSeq)
	if s.ID == 0 {
		note = fmt.Sprintf("global rollback %d: no completed checkpoint, restarting empty", m.Seq)
	}
	n.Trace(ha.Event{Kind: ha.EvRestore, Peer: m.From, Seq: s.ID, N: int64(len(m.Body)), Note: note})
	// The generation is the least epoch: a host that executes an older
	// rollback's order late (paused while it was sent) takes a lower
	// epoch than the host the newer rollback restarted, and is fenced.
	var minEpoch uint64
	if !n.Planted().Has(ha.PlantRollbackEpochLocal) {
		minEpoch = m.Seq
	}
	n.TakeOver(ha.TakeoverOptions{MinEpoch: minEpoch})
	n.Send(m.From, ack)
}

// onRewind notes at a source where its replay log restarts.
func (h *hooks) onRewind(m *ha.Message) {
	n := h.n
	if !n.IsSource() || !h.fromFragmentHost(m) {
		return
	}
	b, err := decodeBarrier(m.Body)
	if err != nil || b.Gen <= h.gen {
		return
	}
	h.gen = b.Gen
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: n.Route(0).Primary, Seq: b.Pos,
		Note: fmt.Sprintf("rewind: global rollback %d to checkpoint %d replays this source after seq %d", b.Gen, b.ID, b.Pos)})
}

// PeerDown implements ha.Hooks: the store appoints a new coordinator when
// the coordinator fails; the coordinator rolls the job back when a
// fragment's primary (or a host restarting one) fails.
func (h *hooks) PeerDown(host string) {
	switch {
	case h.st != nil:
		h.storePeerDown(host)
	case h.co != nil:
		h.coordPeerDown(host)
	}
}

// PeerUp implements ha.Hooks.
func (h *hooks) PeerUp(host string) {
	switch {
	case h.st != nil:
		h.storePeerUp(host)
	case h.co != nil:
		h.coordPeerUp(host)
	}
}
