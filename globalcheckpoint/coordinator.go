package globalcheckpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamha/streamha/ha"
)

// ---- the coordinator (a fragment host) ----

// coordinator is the checkpoint coordinator, Flink's JobManager: it
// decides when a checkpoint is complete, watches the fragments' primaries
// and orders the global rollback, and tells the sources and fragments how
// far to trim. Every fragment host has one; it is active on the host the
// store appointed, at the store's term. It keeps nothing the store cannot
// give a successor: the store answers each of its orders with what it
// needs (positions, generation, targets).
type coordinator struct {
	active bool
	term   uint64 // the newest term this host knows of
	gen    uint64 // the rollback generation the store last confirmed
	done   uint64 // the last checkpoint the store completed on its order
	// asking: a rollback order awaits the store's answer (re-sent every
	// retryEvery); why says what caused it
	asking bool
	why    string
	// targets are the hosts of the current generation, per fragment
	targets []string
	stalled bool // a rollback waits for a live host of some fragment
	// suspect is the predecessor the store replaced, not chosen as a
	// restore target in the takeover's rollback even if this host's
	// detector has not declared it dead yet
	suspect string
	// acks: checkpoint id → fragments whose snapshot the store holds
	acks map[uint64][]bool
}

func newCoordinator(n *ha.Node) *coordinator {
	co := &coordinator{acks: map[uint64][]bool{}}
	if n.Host() == initialCoordinator(n.Topology()) {
		co.active, co.term = true, 1
	}
	return co
}

// fromStore reports whether m comes from the store.
func (h *hooks) fromStore(m *ha.Message) bool { return m.From == h.n.Topology().Sink }

// sendToStore sends an order of type typ at this coordinator's term.
func (h *hooks) sendToStore(typ string, o *order) {
	o.Term = h.co.term
	sendOrder(h.n, h.n.Topology().Sink, typ, o)
}

// onAppoint makes this host the coordinator at the store's new term. Its
// predecessor's host failed — a fragment host, so a fragment failure —
// and whatever rollback or checkpoint it had under way is lost with it:
// the new coordinator rolls the job back to the last completed checkpoint.
func (h *hooks) onAppoint(m *ha.Message) {
	co, n := h.co, h.n
	o, ok := readOrder(n, m)
	if co == nil || !ok || !h.fromStore(m) || o.Term < co.term {
		return
	}
	if o.Term == co.term {
		if co.active && co.asking {
			h.askRollback() // the store has not heard from this coordinator yet
		}
		return
	}
	pred := ""
	if len(o.Hosts) > 0 && o.Hosts[0] != n.Host() {
		pred = o.Hosts[0]
	}
	co.active, co.term, co.gen, co.done, co.suspect = true, o.Term, o.Gen, o.ID, pred
	co.asking, co.targets, co.stalled = false, nil, false
	clear(co.acks)
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: pred, Seq: o.ID, N: int64(o.Term),
		Note: fmt.Sprintf("coordinator takeover at term %d from %s: rolls the job back to checkpoint %d", o.Term, pred, o.ID)})
	h.rollback("coordinator takeover from " + pred)
}

// onFenced deactivates a coordinator the store replaced.
func (h *hooks) onFenced(m *ha.Message) {
	co, n := h.co, h.n
	o, ok := readOrder(n, m)
	if co == nil || !ok || !h.fromStore(m) || o.Term < co.term || len(o.Hosts) == 0 || o.Hosts[0] == n.Host() {
		return
	}
	co.term = o.Term
	if co.active {
		co.active, co.asking = false, false
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: o.Hosts[0], N: int64(o.Term),
			Note: fmt.Sprintf("coordinator fenced: the store appointed %s at term %d", o.Hosts[0], o.Term)})
	}
}

// coordPeerDown: the failure of a fragment's primary (or of a host
// restarting one) rolls the whole job back.
func (h *hooks) coordPeerDown(host string) {
	co, n := h.co, h.n
	if !co.active {
		return
	}
	f, ok := n.Topology().FragOf(host)
	if !ok || f < 0 || f >= len(n.Topology().Frags) {
		return
	}
	// Once this coordinator ordered a rollback, its targets are the
	// fragments' hosts (a route announcing one may still be on its way);
	// before, the routes are.
	serves := n.Route(f).Primary == host
	if co.targets != nil {
		serves = co.targets[f] == host
	}
	if serves {
		h.rollback(host + " failed")
	}
}

// coordPeerUp: a rollback that found some fragment without a live host
// is tried again.
func (h *hooks) coordPeerUp(string) {
	if h.co.active && h.co.stalled {
		h.rollback("a host is back")
	}
}

// rollback chooses a host per fragment — its primary if alive, else its
// first live host — and orders the store to restart every fragment there
// from the last completed checkpoint.
func (h *hooks) rollback(why string) {
	co, n := h.co, h.n
	topo := n.Topology()
	dead := func(x string) bool { return x != n.Host() && (n.Down(x) || x == co.suspect) }
	targets := make([]string, len(topo.Frags))
	for f, fr := range topo.Frags {
		t := n.Route(f).Primary
		if dead(t) {
			i := slices.IndexFunc(fr.Hosts, func(x string) bool { return !dead(x) })
			t = ""
			if i >= 0 {
				t = fr.Hosts[i]
			} else if co.suspect != "" && slices.Contains(fr.Hosts, co.suspect) && !n.Down(co.suspect) &&
				!n.Planted().Has(ha.PlantSuspectNeverTarget) {
				// The replaced coordinator is avoided only while another
				// host can take its fragment: the store may have replaced
				// it across a partition, alive, and as the fragment's only
				// live host it is the one restore target there is (were it
				// dead, its failure orders the next rollback). Waiting for
				// another host stalled the job for good.
				t = co.suspect
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
	co.asking, co.why, co.targets = true, why, targets
	n.Trace(ha.Event{Kind: ha.EvNote, Seq: co.done, N: int64(co.gen + 1),
		Note: fmt.Sprintf("%s: coordinator orders global rollback %d on %s", why, co.gen+1, strings.Join(targets, ", "))})
	h.askRollback()
	n.SetTimer(retryEvery, timerAsk)
}

// askRollback sends the pending rollback order.
func (h *hooks) askRollback() {
	co := h.co
	h.sendToStore(typeRollback, &order{Gen: co.gen, Hosts: co.targets})
}

// askTimer re-sends a rollback order the store has not answered.
func (h *hooks) askTimer() {
	if h.co.active && h.co.asking {
		h.askRollback()
		h.n.SetTimer(retryEvery, timerAsk)
	}
}

// onBegun: the store started the rollback. The coordinator tells each
// source where its replay restarts, and orders the next rollback at once
// if a target failed meanwhile.
func (h *hooks) onBegun(m *ha.Message) {
	co, n := h.co, h.n
	o, ok := readOrder(n, m)
	if co == nil || !ok || !h.fromStore(m) || !co.active || o.Term != co.term || o.Gen <= co.gen {
		return
	}
	co.gen, co.done, co.targets, co.asking, co.suspect = o.Gen, o.ID, o.Hosts, false, ""
	clear(co.acks)
	for p, src := range n.Topology().Sources {
		b := barrier{Gen: o.Gen, ID: o.ID, Pos: at(o.Vals, p)}
		n.Send(src, &ha.Message{Kind: ha.KindStrategy, Type: typeRewind, Body: b.encode()})
	}
	for _, t := range co.targets {
		if n.Down(t) {
			h.rollback(t + " failed")
			return
		}
	}
}

// onStored counts the snapshots the store holds and orders it to complete
// a checkpoint once it holds every fragment's.
func (h *hooks) onStored(m *ha.Message) {
	co, n := h.co, h.n
	o, ok := readOrder(n, m)
	frags := len(n.Topology().Frags)
	if co == nil || !ok || !h.fromStore(m) || !co.active || o.Term != co.term || o.Gen != co.gen || o.ID <= co.done ||
		len(o.Vals) != 1 || o.Vals[0] >= uint64(frags) {
		return
	}
	got := co.acks[o.ID]
	if got == nil {
		got = make([]bool, frags)
		co.acks[o.ID] = got
	}
	got[o.Vals[0]] = true
	if slices.Contains(got, false) {
		return
	}
	for k := range co.acks {
		if k <= o.ID {
			delete(co.acks, k)
		}
	}
	h.sendToStore(typeCommit, &order{Gen: co.gen, ID: o.ID})
}

// onCommitted tells every source and fragment primary how far it may
// trim its retained output now that the store completed checkpoint o.ID.
func (h *hooks) onCommitted(m *ha.Message) {
	co, n := h.co, h.n
	o, ok := readOrder(n, m)
	topo := n.Topology()
	if co == nil || !ok || !h.fromStore(m) || !co.active || o.Term != co.term || o.Gen != co.gen || o.ID <= co.done ||
		len(o.Vals) != len(topo.Sources)+len(topo.Frags) {
		return
	}
	co.done = o.ID
	trim := func(to string, pos uint64) {
		b := barrier{Gen: o.Gen, ID: o.ID, Pos: pos}
		switch {
		case to == n.Host():
			h.trim(b)
		case to != "" && !n.Down(to):
			n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: typeComplete, Seq: o.ID, Body: b.encode()})
		}
	}
	for p, src := range topo.Sources {
		trim(src, o.Vals[p])
	}
	for f := range topo.Frags {
		trim(n.Route(f).Primary, o.Vals[len(topo.Sources)+f])
	}
}
