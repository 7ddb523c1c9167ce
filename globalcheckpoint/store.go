package globalcheckpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamha/streamha/ha"
)

// ---- the store (the sink's host) ----

// store is the checkpoint store on the sink's host: Flink's durable
// checkpoint storage and its high-availability metadata in one. It keeps
// the snapshots, the last completed checkpoint, the rollback generation
// and who coordinates at which term; it restores the fragments on the
// coordinator's order; and it runs the sink's side of the protocol.
type store struct {
	// term is the coordinator's term, coord the coordinator: the store
	// serves only coord's orders stamped with term. appointed is set
	// until coord's first order of the term arrives. probing and settling
	// are the checks before an appointment (see storePeerDown); stalled:
	// no host to appoint.
	term      uint64
	coord     string
	appointed bool
	probing   bool
	settling  bool
	stalled   bool
	former    []string // the coordinators of earlier terms
	gen       uint64
	// pending: checkpoint id → stored snapshot bodies, one per fragment
	pending map[uint64][][]byte
	// the last completed checkpoint: id, bodies, and the decoded positions
	done     uint64
	bodies   [][]byte
	snaps    []*snapshot
	targets  []string // restore target per fragment in the current rollback
	restored []bool
	reading  int // the fragment whose snapshot the store is reading, -1: none
	// sink position to take after the rollback: set when the last
	// fragment's restarted primary acknowledges its restore
	resetPending bool
	resetTo      uint64
	// transactional sink: outputs up to committed are released; held
	// are the outputs after it, in seq order
	committed uint64
	held      []ha.Tuple
}

func newStore(t *ha.Topology) *store {
	return &store{term: 1, coord: initialCoordinator(t), pending: map[uint64][][]byte{}, reading: -1}
}

// sendOrder sends an order of type typ to host to.
func sendOrder(n *ha.Node, to, typ string, o *order) {
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: typ, Seq: o.Gen, Body: o.encode()})
}

// readOrder decodes m's order, tracing why when it cannot.
func readOrder(n *ha.Node, m *ha.Message) (*order, bool) {
	o, err := decodeOrder(m.Body)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: m.Type + " dropped: " + err.Error()})
		return nil, false
	}
	return o, true
}

// fromCoordinator reports whether o, received from host from, is an order
// of the current coordinator at the current term; otherwise it tells the
// sender who coordinates now (a coordinator the store replaced learns
// it is fenced). The first order of a term acknowledges the appointment.
func (h *hooks) fromCoordinator(from string, o *order) bool {
	st, n := h.st, h.n
	if from == st.coord && o.Term == st.term {
		st.appointed = false
		return true
	}
	if f, ok := n.Topology().FragOf(from); ok && f >= 0 && f < len(n.Topology().Frags) {
		sendOrder(n, from, typeFenced, &order{Term: st.term, Gen: st.gen, Hosts: []string{st.coord}})
	}
	return false
}

// onSnap stores a fragment's snapshot and tells the coordinator.
func (h *hooks) onSnap(m *ha.Message) {
	st, n := h.st, h.n
	if st == nil {
		return
	}
	s, err := decodeSnapshot(m.Body)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: "snapshot dropped: " + err.Error()})
		return
	}
	frags := len(n.Topology().Frags)
	if s.Gen != st.gen || s.ID <= st.done || s.Frag >= uint64(frags) || n.Route(int(s.Frag)).Primary != m.From {
		return // from before a rollback, superseded, or from a fenced host
	}
	bodies := st.pending[s.ID]
	if bodies == nil {
		bodies = make([][]byte, frags)
		st.pending[s.ID] = bodies
	}
	bodies[s.Frag] = slices.Clone(m.Body) // m is valid only during the call
	n.Trace(ha.Event{Kind: ha.EvCheckpointEnd, Peer: m.From, Seq: s.ID, N: int64(len(m.Body)), Note: "stored"})
	if !n.Down(st.coord) {
		sendOrder(n, st.coord, typeStored, &order{Term: st.term, Gen: st.gen, ID: s.ID, Vals: []uint64{s.Frag}})
	}
}

// onCommit completes a checkpoint on the coordinator's order.
func (h *hooks) onCommit(m *ha.Message) {
	st := h.st
	o, ok := readOrder(h.n, m)
	if st == nil || !ok || !h.fromCoordinator(m.From, o) || o.Gen != st.gen || o.ID <= st.done {
		return
	}
	bodies := st.pending[o.ID]
	if bodies == nil || slices.ContainsFunc(bodies, func(b []byte) bool { return b == nil }) {
		return // the coordinator counts only what the store said it holds
	}
	if st.resetPending {
		// The last fragment restarted but its acknowledgement has not
		// arrived: the sink has not taken its position for this
		// generation yet, so how far the last fragment may trim is not
		// known. A later checkpoint completes once it has.
		return
	}
	h.complete(o.ID, bodies)
}

// complete makes checkpoint id the one a rollback restores, releases the
// outputs it covers to a transactional sink, and tells the coordinator
// how far every source and fragment may trim its retained output.
func (h *hooks) complete(id uint64, bodies [][]byte) {
	st, n := h.st, h.n
	snaps := make([]*snapshot, len(bodies))
	total := 0
	for i, b := range bodies {
		snaps[i], _ = decodeSnapshot(b) // decoded once already in onSnap
		total += len(b)
	}
	st.done, st.bodies, st.snaps = id, bodies, snaps
	for k := range st.pending {
		if k <= id {
			delete(st.pending, k)
		}
	}
	n.Trace(ha.Event{Kind: ha.EvCheckpointEnd, Seq: id, N: int64(total),
		Note: fmt.Sprintf("completed on %s's order: every fragment's snapshot is stored", st.coord)})
	topo := n.Topology()
	last := len(topo.Frags) - 1
	// Trim positions: each source, then each fragment (the next one's
	// recorded input; for the last, what the sink has received).
	var trims []uint64
	for p := range topo.Sources {
		trims = append(trims, at(snaps[0].In, p))
	}
	for f := 0; f < last; f++ {
		trims = append(trims, at(snaps[f+1].In, 0))
	}
	trims = append(trims, min(snaps[last].OutSeq, n.InputSeq(0)))
	sendOrder(n, st.coord, typeCommitted, &order{Term: st.term, Gen: st.gen, ID: id, Vals: trims})
	if h.cfg.Sink == SinkTransactional {
		st.committed = max(st.committed, snaps[last].OutSeq)
		h.release()
	}
}

// at is s[i], or 0 beyond its end.
func at(s []uint64, i int) uint64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// sinkInput drops what the job produces between the start of a rollback
// and the restarted last fragment's acknowledgement (the old execution,
// which Flink would have cancelled), and, with a transactional sink, holds an output
// until a completed checkpoint covers it.
func (h *hooks) sinkInput(t *ha.Tuple) bool {
	st := h.st
	if st.resetPending && !t.IsEnd() {
		return false
	}
	if h.cfg.Sink != SinkTransactional || t.IsEnd() || t.Seq <= st.committed {
		return true
	}
	// A seq held already was produced again (the sink's position went back
	// to the restored checkpoint): the new copy replaces the old ones.
	if n := len(st.held); n > 0 && st.held[n-1].Seq >= t.Seq {
		st.held = slices.DeleteFunc(st.held, func(h ha.Tuple) bool { return h.Seq >= t.Seq })
	}
	st.held = append(st.held, *t)
	return false
}

// release delivers the held outputs the last completed checkpoint covers.
func (h *hooks) release() {
	st, n := h.st, h.n
	i := 0
	for ; i < len(st.held) && st.held[i].Seq <= st.committed; i++ {
		n.Trace(ha.Event{Kind: ha.EvDeliver, Tuple: &st.held[i]})
	}
	if i > 0 {
		n.Work(i, 0)
		st.held = slices.Delete(st.held, 0, i)
	}
}

// ---- appointing the coordinator ----

// initialCoordinator is the first fragment's first host, which
// coordinates from the start at term 1.
func initialCoordinator(t *ha.Topology) string { return t.Frags[0].Hosts[0] }

// candidate is who the store appoints: the primary, as the store knows
// the routes, of the first fragment whose primary it sees alive; else the
// first host in chain order it sees alive; "" when it sees none.
func (h *hooks) candidate() string {
	n := h.n
	topo := n.Topology()
	for f := range topo.Frags {
		if p := n.Route(f).Primary; p != "" && !n.Down(p) {
			return p
		}
	}
	for _, fr := range topo.Frags {
		if i := slices.IndexFunc(fr.Hosts, func(x string) bool { return !n.Down(x) }); i >= 0 {
			return fr.Hosts[i]
		}
	}
	return ""
}

// appoint replaces a coordinator the store's detector declared dead: the
// next term goes to the candidate, told the rollback generation and the
// last completed checkpoint; it rolls the job back from there. With no
// candidate the store waits for one.
func (h *hooks) appoint(why string) {
	st, n := h.st, h.n
	if !n.Down(st.coord) {
		if st.stalled {
			st.stalled = false
			n.Trace(ha.Event{Kind: ha.EvNote, Peer: st.coord, N: int64(st.term),
				Note: fmt.Sprintf("coordinator %s is back (term %d): no new coordinator", st.coord, st.term)})
		}
		if st.appointed {
			h.sendAppointment()
		}
		return
	}
	c := h.candidate()
	if c == "" {
		if !st.stalled {
			n.Trace(ha.Event{Kind: ha.EvNote, Peer: st.coord, Note: why + ": no coordinator to appoint, the store waits"})
		}
		st.stalled = true
		return
	}
	st.stalled = false
	st.former = append(st.former, st.coord)
	old := st.coord
	st.term++
	st.coord, st.appointed = c, true
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: c, N: int64(st.term),
		Note: fmt.Sprintf("%s: coordinator %s appointed at term %d (was %s), last completed checkpoint %d", why, c, st.term, old, st.done)})
	h.sendAppointment()
	n.SetTimer(retryEvery, timerAppoint)
}

// sendAppointment tells the appointed coordinator its term.
func (h *hooks) sendAppointment() {
	st := h.st
	if h.n.Down(st.coord) {
		return
	}
	pred := st.former[len(st.former)-1]
	sendOrder(h.n, st.coord, typeAppoint, &order{Term: st.term, Gen: st.gen, ID: st.done, Hosts: []string{pred}})
}

// appointTimer re-sends an appointment until the coordinator answers.
func (h *hooks) appointTimer() {
	if h.st.appointed {
		h.sendAppointment()
		h.n.SetTimer(retryEvery, timerAppoint)
	}
}

// A store cut off from every host declares the coordinator dead like any
// other host; appointing a new one would roll the job back for nothing.
// So, like a fragment host elected to take over (ha.Successor), the store
// first makes sure it is not the one cut off: after the coordinator's
// death it asks the candidate for its route and appoints as soon as any
// other live host's message arrives, or after ha.ElectionSettle by its
// detector's view — by then a store cut off has declared every host dead
// and waits. Once it sees hosts again it waits ha.ElectionSettle more for
// the old coordinator to be seen too.

// storePeerDown: the coordinator's death starts the check above.
func (h *hooks) storePeerDown(host string) {
	st, n := h.st, h.n
	if host != st.coord || st.probing || st.settling {
		return
	}
	st.probing = true
	if c := h.candidate(); c != "" {
		n.Send(c, &ha.Message{Kind: ha.KindRoute, Type: ha.RouteQueryType})
	}
	n.SetTimer(ha.ElectionSettle, timerSettle)
}

// storeHeard: a message from a live host ends the check at once.
func (h *hooks) storeHeard(m *ha.Message) {
	st := h.st
	if st.probing && m.From != st.coord && !h.n.Down(m.From) {
		st.probing = false
		h.appoint(st.coord + " failed")
	}
}

// settleTimer ends the check by the detector's view.
func (h *hooks) settleTimer() {
	st := h.st
	if st.probing || st.settling {
		st.probing, st.settling = false, false
		h.appoint(st.coord + " failed")
	}
}

// storePeerUp: a store that waited for a coordinator settles, then
// decides; a former coordinator seen again is told who coordinates now.
func (h *hooks) storePeerUp(host string) {
	st, n := h.st, h.n
	if st.stalled && !st.settling {
		st.settling = true
		n.SetTimer(ha.ElectionSettle, timerSettle)
	}
	if host != st.coord && slices.Contains(st.former, host) {
		sendOrder(n, host, typeFenced, &order{Term: st.term, Gen: st.gen, Hosts: []string{st.coord}})
	}
}

// ---- global rollback, on the coordinator's order ----

// onRollback starts global rollback gen+1 on the coordinator's targets:
// the sink drops the old execution's output, a transactional sink aborts
// what no completed checkpoint covers, and the store restores every
// fragment from the last completed checkpoint. A repeated order (its
// answer was lost) is answered again.
func (h *hooks) onRollback(m *ha.Message) {
	st, n := h.st, h.n
	o, ok := readOrder(n, m)
	if st == nil || !ok || !h.fromCoordinator(m.From, o) {
		return
	}
	topo := n.Topology()
	switch {
	case o.Gen < st.gen:
		h.sendBegun()
		return
	case o.Gen > st.gen:
		return
	case len(o.Hosts) != len(topo.Frags):
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("rollback order ignored: %d targets for %d fragments", len(o.Hosts), len(topo.Frags))})
		return
	}
	for f, t := range o.Hosts {
		if !slices.Contains(topo.Frags[f].Hosts, t) {
			n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("rollback order ignored: %s is no host of fragment %s", t, topo.Frags[f].Name)})
			return
		}
	}
	st.gen++
	st.targets, st.restored, st.reading = o.Hosts, make([]bool, len(o.Hosts)), -1
	clear(st.pending)
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: st.done, N: int64(st.gen),
		Note: fmt.Sprintf("global rollback %d to checkpoint %d on %s, ordered by coordinator %s (term %d)", st.gen, st.done, strings.Join(st.targets, ", "), st.coord, st.term)})
	h.sendBegun()
	h.sendRestores()
	// The sink's position after the rollback: the restored checkpoint's
	// output seq, or, behind it (outputs lost on the way), what the sink
	// had received when the rollback began — what it drops from now on
	// still moves its position, so it is taken now. A rollback that
	// follows another before the sink reset restores the same checkpoint
	// and keeps that position.
	last := len(topo.Frags) - 1
	var out uint64
	if st.snaps != nil {
		out = st.snaps[last].OutSeq
	}
	if st.resetPending {
		st.resetTo = min(st.resetTo, out)
	} else {
		st.resetTo = min(out, n.InputSeq(0))
	}
	st.resetPending = true
	if h.cfg.Sink == SinkTransactional {
		// Abort: what no completed checkpoint covers is produced again.
		st.held = slices.DeleteFunc(st.held, func(t ha.Tuple) bool { return t.Seq > st.committed })
	}
	n.SetTimer(retryEvery, timerRetry)
}

// sendBegun tells the coordinator the current rollback started: its
// generation, checkpoint, targets and each source's restart position.
func (h *hooks) sendBegun() {
	st, n := h.st, h.n
	o := &order{Term: st.term, Gen: st.gen, ID: st.done, Hosts: st.targets}
	for p := range n.Topology().Sources {
		if st.snaps != nil {
			o.Vals = append(o.Vals, at(st.snaps[0].In, p))
		} else {
			o.Vals = append(o.Vals, 0)
		}
	}
	sendOrder(n, st.coord, typeBegun, o)
}

// sendRestores restarts the first fragment, in chain order, that has not
// acknowledged its restore: the store reads its snapshot (CPU per byte on
// the store's host) and sends it once read. The next fragment's follows
// the acknowledgement, so every fragment restarts after its upstream
// announced its new epoch and never takes input from the old execution;
// and a job with more state in all takes longer to restore.
func (h *hooks) sendRestores() {
	st, n := h.st, h.n
	f := slices.Index(st.restored, false)
	if f < 0 || st.reading >= 0 {
		return
	}
	st.reading = f
	n.Work(0, len(h.restoreBody(f)))
	n.SetTimer(0, timerRead)
}

// sendRead sends the snapshot just read to its fragment's restore target.
func (h *hooks) sendRead() {
	st, n := h.st, h.n
	if st == nil || st.reading < 0 {
		return
	}
	f := st.reading
	st.reading = -1
	t := st.targets[f]
	if st.restored[f] || n.Down(t) {
		return
	}
	// The target takes over at the epoch after the newest it knows: tell
	// it the newest route of its fragment the store knows first (a host
	// cut off while another took its fragment over may not know it), so
	// its takeover supersedes every earlier one.
	r := n.Route(f)
	n.Send(t, &ha.Message{Kind: ha.KindRoute, Route: &r})
	n.Send(t, &ha.Message{Kind: ha.KindStrategy, Type: typeRestore, Seq: st.gen, Body: h.restoreBody(f)})
}

// restoreBody is fragment f's snapshot in the last completed checkpoint,
// or an empty one (start afresh) when none completed yet.
func (h *hooks) restoreBody(f int) []byte {
	if h.st.bodies != nil {
		return h.st.bodies[f]
	}
	return (&snapshot{Frag: uint64(f)}).encode()
}

// retryRestore re-sends unacknowledged restores until every fragment
// restarted, and asks a restarted host whose route the store has not
// learned (the announcement was lost) for it: until then the sink would
// drop its fragment's output as coming from a host that is not the
// primary.
func (h *hooks) retryRestore() {
	st, n := h.st, h.n
	if st == nil || st.targets == nil {
		return
	}
	pending := slices.Contains(st.restored, false)
	for f, t := range st.targets {
		if st.restored[f] && n.Route(f).Primary != t && !n.Down(t) {
			n.Send(t, &ha.Message{Kind: ha.KindRoute, Type: ha.RouteQueryType})
			pending = true
		}
	}
	if !pending {
		return
	}
	h.sendRestores()
	n.SetTimer(retryEvery, timerRetry)
}

// onRestored records that a fragment restarted in the current rollback.
func (h *hooks) onRestored(m *ha.Message) {
	st, n := h.st, h.n
	if st == nil || m.Seq != st.gen || st.targets == nil {
		return
	}
	f := slices.Index(st.targets, m.From)
	if f < 0 || st.restored[f] {
		return
	}
	st.restored[f] = true
	if f == len(st.targets)-1 {
		// The acknowledgement follows the restarted last fragment's route
		// on the same link, before any output of its new execution, and
		// names its generation: a route alone may come from the takeover
		// of an earlier generation's restore still on its way when this
		// rollback began.
		h.resetSink()
	}
	if !slices.Contains(st.restored, false) {
		n.Trace(ha.Event{Kind: ha.EvNote, Seq: st.done, N: int64(st.gen),
			Note: fmt.Sprintf("global rollback %d: every fragment restarted from checkpoint %d", st.gen, st.done)})
		return
	}
	h.sendRestores()
}

// resetSink takes the sink's input position back to the restored
// checkpoint, once per rollback.
func (h *hooks) resetSink() {
	st, n := h.st, h.n
	if !st.resetPending {
		return
	}
	st.resetPending = false
	// Behind the checkpoint, the sink asks the restarted fragment to
	// resend from there: the snapshot's log. Back to the start, its input
	// is as at the start of the run: output seq 1 is the next one, and a
	// later one is a gap to repair (SetInputSeq 0 would take any next seq
	// as the start of a fresh stream).
	behind := n.InputSeq(0) > st.resetTo
	if st.resetTo == 0 {
		if err := n.Restart(); err != nil {
			n.Trace(ha.Event{Kind: ha.EvNote, Note: "sink reset failed: " + err.Error()})
		}
	} else {
		n.SetInputSeq(0, st.resetTo)
	}
	// What arrived from the old execution after the rollback began is produced again.
	st.held = slices.DeleteFunc(st.held, func(t ha.Tuple) bool { return t.Seq > st.resetTo })
	// What the sink had received beyond its new position (dropped while
	// the reset waited, or held and aborted) is asked for at once rather
	// than when a later output shows the gap: when the restarted last
	// fragment's output already ended, the end was accepted and
	// acknowledged while the reset waited, and no later output comes.
	if behind && !n.Planted().Has(ha.PlantResetNoResend) {
		n.AskResend(0, fmt.Sprintf("global rollback %d: the sink's position went back to %d; asking the last fragment to resend from there", st.gen, st.resetTo))
	}
}
