package globalcheckpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamha/streamha/ha"
)

// ---- coordinator and store (the sink's host) ----

// onSnap stores a fragment's snapshot and completes the checkpoint once
// every fragment's is stored.
func (h *hooks) onSnap(m *ha.Message) {
	co, n := h.co, h.n
	if co == nil {
		return
	}
	s, err := decodeSnapshot(m.Body)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: "snapshot dropped: " + err.Error()})
		return
	}
	frags := len(n.Topology().Frags)
	if s.Gen != co.gen || s.ID <= co.done || s.Frag >= uint64(frags) || n.Route(int(s.Frag)).Primary != m.From {
		return // from before a rollback, superseded, or from a fenced host
	}
	bodies := co.pending[s.ID]
	if bodies == nil {
		bodies = make([][]byte, frags)
		co.pending[s.ID] = bodies
	}
	bodies[s.Frag] = slices.Clone(m.Body) // m is valid only during the call
	n.Trace(ha.Event{Kind: ha.EvCheckpointEnd, Peer: m.From, Seq: s.ID, N: int64(len(m.Body)), Note: "stored"})
	if !slices.ContainsFunc(bodies, func(b []byte) bool { return b == nil }) {
		h.complete(s.ID, bodies)
	}
}

// complete makes checkpoint id the one a rollback restores, lets every
// source and fragment trim what it no longer needs and, with a
// transactional sink, releases the outputs it covers.
func (h *hooks) complete(id uint64, bodies [][]byte) {
	co, n := h.co, h.n
	snaps := make([]*snapshot, len(bodies))
	total := 0
	for i, b := range bodies {
		snaps[i], _ = decodeSnapshot(b) // decoded once already in onSnap
		total += len(b)
	}
	co.done, co.bodies, co.snaps = id, bodies, snaps
	for k := range co.pending {
		if k <= id {
			delete(co.pending, k)
		}
	}
	n.Trace(ha.Event{Kind: ha.EvCheckpointEnd, Seq: id, N: int64(total), Note: "completed: every fragment's snapshot is stored"})
	topo := n.Topology()
	last := len(topo.Frags) - 1
	trim := func(to string, pos uint64) {
		if to != "" && !n.Down(to) {
			b := barrier{Gen: co.gen, ID: id, Pos: pos}
			n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: typeComplete, Seq: id, Body: b.encode()})
		}
	}
	for p, src := range topo.Sources {
		if p < len(snaps[0].In) {
			trim(src, snaps[0].In[p])
		}
	}
	for f := 0; f < last; f++ {
		trim(n.Route(f).Primary, snaps[f+1].In[0])
	}
	trim(n.Route(last).Primary, min(snaps[last].OutSeq, n.InputSeq(0)))
	if h.cfg.Sink == SinkTransactional {
		co.committed = max(co.committed, snaps[last].OutSeq)
		h.release()
	}
}

// sinkInput drops what the job produces between the start of a rollback
// and the restarted last fragment's route (the old execution, which Flink
// would have cancelled), and, with a transactional sink, holds an output
// until a completed checkpoint covers it.
func (h *hooks) sinkInput(t *ha.Tuple) bool {
	co := h.co
	if co.resetPending && !t.IsEnd() {
		return false
	}
	if h.cfg.Sink != SinkTransactional || t.IsEnd() || t.Seq <= co.committed {
		return true
	}
	// A seq held already was produced again (the sink's position went back
	// to the restored checkpoint): the new copy replaces the old ones.
	if n := len(co.held); n > 0 && co.held[n-1].Seq >= t.Seq {
		co.held = slices.DeleteFunc(co.held, func(h ha.Tuple) bool { return h.Seq >= t.Seq })
	}
	co.held = append(co.held, *t)
	return false
}

// release delivers the held outputs the last completed checkpoint covers.
func (h *hooks) release() {
	co, n := h.co, h.n
	i := 0
	for ; i < len(co.held) && co.held[i].Seq <= co.committed; i++ {
		n.Trace(ha.Event{Kind: ha.EvDeliver, Tuple: &co.held[i]})
	}
	if i > 0 {
		n.Work(i, 0)
		co.held = slices.Delete(co.held, 0, i)
	}
}

// PeerDown implements ha.Hooks: at the coordinator, the failure of a
// fragment's primary (or of a host restarting one) rolls the whole job back.
func (h *hooks) PeerDown(host string) {
	co, n := h.co, h.n
	if co == nil {
		return
	}
	f, ok := n.Topology().FragOf(host)
	if !ok || f < 0 || f >= len(n.Topology().Frags) {
		return
	}
	if n.Route(f).Primary == host || (co.targets != nil && co.targets[f] == host) {
		h.rollback(fmt.Sprintf("%s failed", host))
	}
}

// PeerUp implements ha.Hooks: a rollback that found some fragment without
// a live host is tried again.
func (h *hooks) PeerUp(string) {
	if h.co != nil && h.co.stalled {
		h.rollback("a host is back")
	}
}

// rollback restarts every fragment from the last completed checkpoint:
// each on its primary if alive, else on its first live host.
func (h *hooks) rollback(why string) {
	co, n := h.co, h.n
	topo := n.Topology()
	targets := make([]string, len(topo.Frags))
	for f, fr := range topo.Frags {
		t := n.Route(f).Primary
		if n.Down(t) {
			i := slices.IndexFunc(fr.Hosts, func(x string) bool { return !n.Down(x) })
			t = ""
			if i >= 0 {
				t = fr.Hosts[i]
			}
		}
		if t == "" {
			co.stalled = true
			n.Trace(ha.Event{Kind: ha.EvNote, Note: fmt.Sprintf("%s: no live host for fragment %s: the rollback waits for one", why, fr.Name)})
			return
		}
		targets[f] = t
	}
	co.stalled = false
	co.gen++
	co.targets, co.restored, co.reading = targets, make([]bool, len(targets)), -1
	clear(co.pending)
	n.Trace(ha.Event{Kind: ha.EvNote, Seq: co.done, N: int64(co.gen),
		Note: fmt.Sprintf("%s: global rollback %d to checkpoint %d on %s", why, co.gen, co.done, strings.Join(targets, ", "))})
	h.sendRestores()
	last := len(topo.Frags) - 1
	for p, src := range topo.Sources {
		b := barrier{Gen: co.gen, ID: co.done}
		if co.snaps != nil && p < len(co.snaps[0].In) {
			b.Pos = co.snaps[0].In[p]
		}
		n.Send(src, &ha.Message{Kind: ha.KindStrategy, Type: typeRewind, Body: b.encode()})
	}
	co.resetPending, co.resetTo = true, 0
	if co.snaps != nil {
		co.resetTo = co.snaps[last].OutSeq
	}
	if h.cfg.Sink == SinkTransactional {
		// Abort: what no completed checkpoint covers is produced again.
		co.held = slices.DeleteFunc(co.held, func(t ha.Tuple) bool { return t.Seq > co.committed })
	}
	n.SetTimer(retryEvery, timerRetry)
}

// sendRestores restarts the first fragment, in chain order, that has not
// acknowledged its restore: the store reads its snapshot (CPU per byte on
// the store's host) and sends it once read. The next fragment's follows
// the acknowledgement, so every fragment restarts after its upstream
// announced its new epoch and never takes input from the old execution;
// and a job with more state in all takes longer to restore.
func (h *hooks) sendRestores() {
	co, n := h.co, h.n
	f := slices.Index(co.restored, false)
	if f < 0 || co.reading >= 0 {
		return
	}
	co.reading = f
	n.Work(0, len(h.restoreBody(f)))
	n.SetTimer(0, timerRead)
}

// sendRead sends the snapshot just read to its fragment's restore target.
func (h *hooks) sendRead() {
	co, n := h.co, h.n
	if co == nil || co.reading < 0 {
		return
	}
	f := co.reading
	co.reading = -1
	t := co.targets[f]
	if co.restored[f] || n.Down(t) {
		return
	}
	// The target takes over at the epoch after the newest it knows: tell
	// it the newest route of its fragment the coordinator knows first (a
	// host cut off while another took its fragment over may not know
	// it), so its takeover supersedes every earlier one.
	r := n.Route(f)
	n.Send(t, &ha.Message{Kind: ha.KindRoute, Route: &r})
	n.Send(t, &ha.Message{Kind: ha.KindStrategy, Type: typeRestore, Seq: co.gen, Body: h.restoreBody(f)})
}

// restoreBody is fragment f's snapshot in the last completed checkpoint,
// or an empty one (start afresh) when none completed yet.
func (h *hooks) restoreBody(f int) []byte {
	if h.co.bodies != nil {
		return h.co.bodies[f]
	}
	return (&snapshot{Frag: uint64(f)}).encode()
}

// retryRestore re-sends unacknowledged restores until every fragment
// restarted, and asks a restarted host whose route the coordinator has
// not learned (the announcement was lost) for it: until then the sink
// would drop its fragment's output as coming from a host that is not the
// primary.
func (h *hooks) retryRestore() {
	co, n := h.co, h.n
	if co == nil || co.targets == nil {
		return
	}
	pending := slices.Contains(co.restored, false)
	for f, t := range co.targets {
		if co.restored[f] && n.Route(f).Primary != t && !n.Down(t) {
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
	co, n := h.co, h.n
	if co == nil || m.Seq != co.gen || co.targets == nil {
		return
	}
	f := slices.Index(co.targets, m.From)
	if f < 0 || co.restored[f] {
		return
	}
	co.restored[f] = true
	if f == len(co.targets)-1 {
		// The acknowledgement follows the restarted last fragment's route
		// on the same link: if the route was lost, the sink resets here.
		h.resetSink()
	}
	if !slices.Contains(co.restored, false) {
		n.Trace(ha.Event{Kind: ha.EvNote, Seq: co.done, N: int64(co.gen),
			Note: fmt.Sprintf("global rollback %d: every fragment restarted from checkpoint %d", co.gen, co.done)})
		return
	}
	h.sendRestores()
}

// RouteChanged implements ha.Hooks: once the last fragment's restarted
// primary announces its route, the sink takes its input position from
// the restored checkpoint, so the outputs that follow it are accepted
// again (and, with an at-least-once sink, delivered again).
func (h *hooks) RouteChanged(old, r ha.Route) {
	co, n := h.co, h.n
	if co == nil || !co.resetPending || co.targets == nil {
		return
	}
	last := len(n.Topology().Frags) - 1
	if r.Frag != last || r.Primary != co.targets[last] || r.Epoch <= old.Epoch {
		return
	}
	h.resetSink()
}

// resetSink takes the sink's input position back to the restored
// checkpoint, once per rollback.
func (h *hooks) resetSink() {
	co, n := h.co, h.n
	if !co.resetPending {
		return
	}
	co.resetPending = false
	// Behind the checkpoint (outputs lost on the way), the sink asks the
	// restarted fragment to resend from where it is: the snapshot's log.
	co.resetTo = min(co.resetTo, n.InputSeq(0))
	n.SetInputSeq(0, co.resetTo)
	// What arrived from the old epoch after the rollback began is produced again.
	co.held = slices.DeleteFunc(co.held, func(t ha.Tuple) bool { return t.Seq > co.resetTo })
}
