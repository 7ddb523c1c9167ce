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
	// typeRestore: coordinator → the host that restarts a fragment; Seq is
	// the rollback generation, Body the stored snapshot (ID 0: start empty).
	typeRestore = "gc.restore"
	// typeRestored: host → coordinator; Seq is the generation restored.
	typeRestored = "gc.restored"
	// typeRewind: coordinator → source; Body is a barrier whose Pos is the
	// position the first fragment restarts after.
	typeRewind = "gc.rewind"
)

// Timer names.
const (
	timerBarrier = "gc.barrier"
	timerRetry   = "gc.retry"
	timerFinal   = "gc.final"
	timerRead    = "gc.read"
	timerSnap    = "gc.snap"
)

// retryEvery is how often the coordinator re-sends a restore that was not
// acknowledged (it may have been lost).
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
// restores; the sink also coordinates and stores (co).
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

	co *coordinator // the sink's host only
}

// coordinator is the checkpoint coordinator and store on the sink's host.
type coordinator struct {
	gen uint64
	// pending: checkpoint id → stored snapshot bodies, one per fragment
	pending map[uint64][][]byte
	// the last completed checkpoint: id, bodies, and the decoded positions
	done     uint64
	bodies   [][]byte
	snaps    []*snapshot
	targets  []string // restore target per fragment in the current rollback
	restored []bool
	reading  int  // the fragment whose snapshot the store is reading, -1: none
	stalled  bool // a rollback waits for a live host of some fragment
	// sink position to take after the rollback: set when the last
	// fragment's restarted primary announces its route
	resetPending bool
	resetTo      uint64
	// transactional sink: outputs up to committed are released; held
	// are the outputs after it, in seq order
	committed uint64
	held      []ha.Tuple
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
	if h.co != nil {
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

// onComplete trims the retained output a completed checkpoint no longer needs.
func (h *hooks) onComplete(m *ha.Message) {
	n := h.n
	if m.From != n.Topology().Sink {
		return
	}
	b, err := decodeBarrier(m.Body)
	if err != nil || (!n.IsSource() && b.Gen != h.gen) {
		return
	}
	n.TrimOutput(b.Pos)
}

// onRestore restarts this host's fragment from the coordinator's snapshot
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
		// coordinator re-sends the restore.
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
	n.TakeOver(ha.TakeoverOptions{})
	n.Send(m.From, ack)
}

// onRewind notes at a source where its replay log restarts.
func (h *hooks) onRewind(m *ha.Message) {
	n := h.n
	if !n.IsSource() || m.From != n.Topology().Sink {
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
