package activestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// Timer names.
const (
	timerAck     = "as.ack"
	timerShip    = "as.ship"
	timerRecruit = "as.recruit"
	timerPrune   = "as.prune"
)

// recruitRetry is how soon a new primary retries starting a secondary
// while it still waits for input its predecessor's decisions refer to.
const recruitRetry = time.Millisecond

// held is an input tuple a decision-following secondary holds until the
// primary's decisions say when to process it.
type held struct {
	port uint8
	t    ha.Tuple
}

// hooks is one node's part of the protocol. A node may play several roles:
// upstream of the next fragment (sources and primaries: retain output,
// trim on acks, relay the trim point, serve catch-up replays), receiver
// (acknowledge input positions), secondary (log output, follow decisions,
// take over) and new primary (re-send the log, start a new secondary).
type hooks struct {
	ha.NopHooks
	n     *ha.Node
	cfg   Config
	stats *Stats

	// upstream role
	acked   map[string]uint64 // downstream receiver -> highest acknowledged seq
	trim    uint64            // highest trim point applied and relayed
	pending map[string]uint64 // catch-up requests from hosts not yet in the route
	pendOrd []string          // their hosts in arrival order

	// receiver role
	ackArmed  bool
	lastAck   [2]uint64
	lastAckTo [2]string

	// replica role
	ready     bool            // holds state consistent with the primary's
	joining   [2]bool         // accepts only contiguous input until the catch-up replay ended
	requested bool            // catch-up requests sent
	retired   map[string]bool // hosts of this fragment that already served in a route
	relayed   uint64          // trim point relayed by the primary

	// interleaving decisions: shipped counts those a primary shipped,
	// decLog keeps the latest to resend; a following secondary expects
	// decision decNext next, and asked for nackSeq again at nackAt
	shipped          uint64
	decLog           ha.DecisionLog
	decNext, nackSeq uint64
	nackAt           time.Duration
	shipArmed        bool
	queue            []held // held input, arrival order (following secondary)
	lastHeld         [2]uint64
	credit           [2]int // decisions handed to the node, per port, without their tuple yet
	injecting        bool
	graceFrom        string // a new primary's predecessor, whose decisions it still follows (grace.go)
}

func newHooks(n *ha.Node, s *Strategy) *hooks {
	return &hooks{
		n: n, cfg: s.cfg, stats: s.stats,
		acked: map[string]uint64{}, pending: map[string]uint64{}, retired: map[string]bool{},
	}
}

func (h *hooks) fragment() bool { return h.n.Frag() >= 0 && !h.n.IsSink() }

// ordered reports whether this node's fragment needs interleaving decisions shipped.
func (h *hooks) ordered() bool { return h.cfg.ShipDecisions && h.fragment() && h.n.Inputs() == 2 }

// following reports whether this node holds its input for the primary's decisions.
func (h *hooks) following() bool {
	n := h.n
	return h.ordered() && h.ready && !n.IsPrimary() && n.IsReceiver()
}

// Start sets retention and arms the timers of the node's initial role.
func (h *hooks) Start() {
	n := h.n
	if !n.IsSink() {
		n.SetRetain(true)
	}
	if h.fragment() {
		r := n.Route(n.Frag())
		h.retire(r)
		h.ready = n.IsReceiver()
		if n.IsPrimary() && h.ordered() {
			n.RecordOrder(true)
			h.armShip()
		}
	}
	if n.IsSink() || (h.fragment() && n.IsReceiver()) {
		h.armAck()
	}
}

func (h *hooks) retire(r ha.Route) {
	h.retired[r.Primary] = true
	for _, x := range r.Receivers {
		h.retired[x] = true
	}
}

func (h *hooks) armAck() {
	if !h.ackArmed {
		h.ackArmed = true
		h.n.SetTimer(h.cfg.AckInterval, timerAck)
	}
}

func (h *hooks) armShip() {
	if !h.shipArmed {
		h.shipArmed = true
		h.n.SetTimer(h.cfg.ShipInterval, timerShip)
	}
}

// Timer sends acknowledgements, ships decisions, or retries recruiting.
func (h *hooks) Timer(name string) {
	n := h.n
	switch name {
	case timerAck:
		h.ackArmed = false
		if !n.IsSink() && !n.IsReceiver() {
			return
		}
		h.sendAcks()
		h.armAck()
	case timerShip:
		h.shipArmed = false
		if !n.IsPrimary() || !h.ordered() {
			return
		}
		h.shipDecisions()
		h.armShip()
	case timerRecruit:
		if n.IsPrimary() {
			h.recruit()
		}
	case timerPrune:
		h.pruneReceivers()
	case timerGrace:
		h.endGrace()
	}
}

// sendAcks tells each upstream primary the highest seq this node accepted
// on its port, when that or the upstream changed.
func (h *hooks) sendAcks() {
	n := h.n
	for p := 0; p < n.Inputs(); p++ {
		up, s := n.Upstream(p), n.InputSeq(p)
		if up == "" || (s == h.lastAck[p] && up == h.lastAckTo[p]) {
			continue
		}
		h.lastAck[p], h.lastAckTo[p] = s, up
		n.Send(up, &ha.Message{Kind: ha.KindAck, Stream: uint8(p), Seq: s})
	}
}

// secondaries are the live hosts besides this primary receiving its fragment's input.
func (h *hooks) secondaries() []string {
	n := h.n
	var out []string
	for _, x := range n.Route(n.Frag()).Receivers {
		if x != n.Host() && !n.Down(x) {
			out = append(out, x)
		}
	}
	return out
}

func (h *hooks) shipDecisions() {
	d := h.n.TakeOrderLog()
	if len(d) == 0 {
		return
	}
	seq := h.shipped
	h.shipped += uint64(len(d))
	h.decLog.Keep(d)
	// TakeOrderLog hands d over and receivers only read it (FollowOrder
	// copies what it keeps), so every secondary can share one body.
	for _, s := range h.secondaries() {
		h.n.Send(s, &ha.Message{Kind: ha.KindStrategy, Type: msgOrder, Seq: seq, Body: d})
	}
}

// onOrderNack resends the shipped decisions from the index a secondary
// asks for, when they are still kept.
func (h *hooks) onOrderNack(m *ha.Message) {
	n := h.n
	if !n.IsPrimary() || !slices.Contains(h.secondaries(), m.From) || m.Seq >= h.shipped {
		return
	}
	d, ok := h.decLog.Since(m.Seq)
	if !ok {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Seq: m.Seq, Note: "decisions asked for are no longer kept"})
		return
	}
	n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgOrder, Seq: m.Seq, Body: d})
}

// Message handles the strategy's own messages and filters the input of
// joining and decision-following secondaries.
func (h *hooks) Message(m *ha.Message) bool {
	if h.injecting {
		return false
	}
	switch m.Kind {
	case ha.KindAck:
		h.onAck(m)
		return true
	case ha.KindStrategy:
		switch m.Type {
		case msgState:
			h.onState(m)
		case msgCatchUp:
			h.onCatchUp(m)
		case msgOrder:
			h.onOrder(m)
		case msgOrderNack:
			h.onOrderNack(m)
		default:
			return false
		}
		return true
	case ha.KindData:
		return h.onData(m)
	}
	return false
}

// ---- upstream role ----

func (h *hooks) onAck(m *ha.Message) {
	n := h.n
	if m.Level == levelRelayed {
		// From this fragment's primary to its secondary: the downstream
		// holds everything up to Seq.
		if h.fragment() && !n.IsPrimary() && m.From == n.Route(n.Frag()).Primary && m.Seq > h.relayed {
			h.relayed = m.Seq
			n.TrimOutput(m.Seq)
		}
		return
	}
	if m.Seq > h.acked[m.From] {
		h.acked[m.From] = m.Seq
		h.updateTrim()
	}
}

// updateTrim trims the output queue to the lowest position every current
// downstream receiver acknowledged (a receiver that never acknowledged
// holds it at 0) and relays it to this fragment's secondaries.
func (h *hooks) updateTrim() {
	n := h.n
	if !n.IsPrimary() || n.IsSink() {
		return
	}
	recv := n.Downstream()
	if len(recv) == 0 {
		return
	}
	t := h.acked[recv[0]]
	for _, r := range recv[1:] {
		t = min(t, h.acked[r])
	}
	if t <= h.trim {
		return
	}
	h.trim = t
	n.TrimOutput(t)
	if h.fragment() {
		for _, s := range h.secondaries() {
			n.Send(s, &ha.Message{Kind: ha.KindAck, Level: levelRelayed, Seq: t})
		}
	}
}

// onCatchUp serves a new secondary's request: replay after its transferred
// input position. Until the route naming it as a receiver arrives, the
// request waits, so that live tuples to it follow the replay.
func (h *hooks) onCatchUp(m *ha.Message) {
	n := h.n
	if !n.IsPrimary() || n.IsSink() {
		return
	}
	if !slices.Contains(n.Downstream(), m.From) {
		if _, ok := h.pending[m.From]; !ok {
			h.pendOrd = append(h.pendOrd, m.From)
		}
		h.pending[m.From] = m.Seq
		return
	}
	h.serveCatchUp(m.From, m.Seq)
}

func (h *hooks) serveCatchUp(to string, from uint64) {
	h.acked[to] = max(h.acked[to], from)
	h.n.Replay(to, from)
}

// ---- replica role ----

// onState installs a state transfer from this fragment's primary.
func (h *hooks) onState(m *ha.Message) {
	n := h.n
	if !h.fragment() || n.IsPrimary() || m.From != n.Route(n.Frag()).Primary || h.ready {
		return
	}
	t, err := install(n, m)
	size := m.WireSize()
	n.Work(0, size)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("state transfer from %s rejected: %v", m.From, err)})
		return
	}
	h.ready = true
	h.relayed = t.Trim
	h.decNext, h.nackSeq = t.Decisions, 0
	for p := range t.In {
		h.joining[p] = true
		h.lastHeld[p] = t.In[p]
	}
	h.queue, h.credit = nil, [2]int{}
	n.Trace(ha.Event{Kind: ha.EvRestore, Peer: m.From, Seq: t.Out, N: int64(size),
		Note: fmt.Sprintf("state transfer from %s: %d operators, %d logged tuples", m.From, len(t.Ops), len(m.Tuples))})
	h.noteLog()
	h.requestCatchUp()
}

// requestCatchUp asks each upstream to replay after the transferred input
// positions, once this node knows it is a receiver.
func (h *hooks) requestCatchUp() {
	n := h.n
	if h.requested || !h.ready || !n.IsReceiver() || n.IsPrimary() {
		return
	}
	h.requested = true
	for p := 0; p < n.Inputs(); p++ {
		n.Send(n.Upstream(p), &ha.Message{Kind: ha.KindStrategy, Type: msgCatchUp, Stream: uint8(p), Seq: h.position(p)})
	}
	h.armAck()
}

// position is the highest input seq this node has accepted or holds on port p.
func (h *hooks) position(p int) uint64 {
	if h.following() {
		return h.lastHeld[p]
	}
	return h.n.InputSeq(p)
}

// onData filters the input of a secondary: nothing before its state
// arrived, only contiguous input while it joins (live tuples that overtook
// the catch-up replay are dropped: the replay brings them again), and all
// input held for the decisions while it follows the primary's order.
func (h *hooks) onData(m *ha.Message) bool {
	n := h.n
	if !h.fragment() || (n.IsPrimary() && !h.inGrace()) || n.Stale(m) || int(m.Stream) >= n.Inputs() || !n.IsReceiver() {
		return false
	}
	if !h.ready {
		return true
	}
	p := m.Stream
	if m.Type == ha.ReplayEndType {
		h.joining[p] = false
		return false
	}
	if h.joining[p] && len(m.Tuples) > 0 && m.Tuples[0].Seq > h.position(int(p))+1 {
		return true
	}
	if !h.following() && !h.inGrace() {
		return false
	}
	for _, t := range m.Tuples {
		if t.Seq <= h.lastHeld[p] {
			continue
		}
		h.lastHeld[p] = t.Seq
		h.queue = append(h.queue, held{port: p, t: t})
	}
	h.pump()
	return true
}

// onOrder hands a batch of the primary's decisions to the node and releases
// the held tuples they cover.
func (h *hooks) onOrder(m *ha.Message) {
	n := h.n
	if !(h.following() && m.From == n.Route(n.Frag()).Primary) && !(h.inGrace() && m.From == h.graceFrom) {
		return
	}
	d := m.Body // read only: FollowOrder copies the decisions it keeps
	switch end := m.Seq + uint64(len(d)); {
	case m.Seq > h.decNext:
		// Decisions were lost on the way: ask for them again (at most
		// once an ack interval) and wait for them in order.
		if now := n.Now(); h.nackSeq != h.decNext || now-h.nackAt >= h.cfg.AckInterval {
			h.nackSeq, h.nackAt = h.decNext, now
			n.Trace(ha.Event{Kind: ha.EvRepair, Peer: m.From, Seq: h.decNext, Note: "interleaving decisions lost: asking for them again"})
			n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgOrderNack, Seq: h.decNext})
		}
		return
	case end <= h.decNext:
		return // had them already
	default:
		d = d[h.decNext-m.Seq:]
	}
	for _, p := range d {
		if p > 1 {
			n.Trace(ha.Event{Kind: ha.EvNote, Peer: m.From, Note: fmt.Sprintf("decision for unknown port %d ignored", p)})
			return
		}
	}
	n.FollowOrder(d)
	h.decNext += uint64(len(d))
	for _, p := range d {
		h.credit[p]++
	}
	h.pump()
}

// pump passes to the node, per port, as many held tuples as it has
// decisions for; the node processes them in the decisions' order.
func (h *hooks) pump() {
	for p := range uint8(2) {
		if h.credit[p] == 0 {
			continue
		}
		var ts []ha.Tuple
		rest := h.queue[:0]
		for _, x := range h.queue {
			if x.port == p && len(ts) < h.credit[p] {
				ts = append(ts, x.t)
			} else {
				rest = append(rest, x)
			}
		}
		h.queue = rest
		h.credit[p] -= len(ts)
		h.inject(p, ts)
	}
}

// inject delivers held tuples to the node as if they arrived now from the
// current upstream (they were checked against its epoch when they arrived).
func (h *hooks) inject(p uint8, ts []ha.Tuple) {
	if len(ts) == 0 {
		return
	}
	n := h.n
	m := &ha.Message{Kind: ha.KindData, From: n.Upstream(int(p)), Frag: n.Frag() - 1, Stream: p, Tuples: ts}
	if n.Frag() == 0 {
		m.Frag = ha.FragSource
	} else {
		m.Epoch = n.Route(n.Frag() - 1).Epoch
	}
	h.injecting = true
	n.Deliver(m)
	h.injecting = false
}

// release passes every held tuple to the node in arrival order (after a
// takeover this node decides the order itself).
func (h *hooks) release() {
	q := h.queue
	h.queue = nil
	for len(q) > 0 {
		p := q[0].port
		i := 0
		var ts []ha.Tuple
		for i < len(q) && q[i].port == p {
			ts = append(ts, q[i].t)
			i++
		}
		q = q[i:]
		h.credit[p] = max(0, h.credit[p]-len(ts))
		h.inject(p, ts)
	}
}

// Output ships, on a primary following ship_decisions, the decisions this
// output depends on before the output itself leaves (the data batch is
// sent when the handler ends, after this message on the way out), so a
// secondary can always reproduce every output the downstream saw. On a
// secondary it records the log size.
func (h *hooks) Output(*ha.Tuple) {
	if h.ordered() && h.n.IsPrimary() {
		h.shipDecisions()
		return
	}
	h.noteLog()
}

func (h *hooks) noteLog() {
	n := h.n
	if n.IsPrimary() || !n.IsReceiver() {
		return
	}
	if l := int64(n.OutputLen()); l > h.stats.SecondaryLogPeak {
		h.stats.SecondaryLogPeak = l
	}
}

// ---- failures ----

// PeerDown makes a primary replace a failed secondary. Taking over from a
// failed primary is the node's election (Successors, TakeOver).
func (h *hooks) PeerDown(string) { h.pruneReceivers() }

// PeerUp lets a primary that was cut off replace the secondaries that
// failed meanwhile, once it sees both sides of its fragment again.
func (h *hooks) PeerUp(string) { h.pruneReceivers() }

// pruneReceivers drops the secondaries declared dead from a primary's
// route and recruits a new one. A primary cut off from its data path
// (ha.Node.SeesNeighbours) leaves its route alone: most hosts look dead
// from there, and each change would raise its epoch above that of the
// host taking over meanwhile. It prunes once it sees its neighbours again
// (PeerUp, or a neighbour's new route).
func (h *hooks) pruneReceivers() {
	n := h.n
	if !h.fragment() || n.Fenced() || !n.IsPrimary() || !n.SeesNeighbours() {
		return
	}
	r := n.Route(n.Frag())
	if !slices.ContainsFunc(r.Receivers, n.Down) {
		return
	}
	if !n.ViewSettled() {
		// Dropping a secondary lets the upstream trim what it still
		// needs if it is alive across a partition: wait until the
		// detector's view settled, when a cut-off primary sees it is.
		n.SetTimer(n.SettleLeft(), timerPrune)
		return
	}
	n.SetReceivers(slices.DeleteFunc(slices.Clone(r.Receivers), n.Down))
	h.recruit()
}

// Successors implements ha.Successor: the secondaries in the route first
// (they hold the state), then the hosts that never served, then those
// that did (a resumed old primary, fenced: it restarts with empty state
// rather than come back with its stale state), each in ring order after
// the primary.
func (h *hooks) Successors() []string {
	n := h.n
	r := n.Route(n.Frag())
	var order []string
	for _, x := range r.Receivers {
		if x != r.Primary {
			order = append(order, x)
		}
	}
	hosts := n.Ring()
	for _, x := range hosts {
		if !h.retired[x] && !slices.Contains(order, x) {
			order = append(order, x)
		}
	}
	for _, x := range hosts {
		if !slices.Contains(order, x) {
			order = append(order, x)
		}
	}
	return order
}

// TakeOver implements ha.Successor.
func (h *hooks) TakeOver() { h.takeOver() }

func (h *hooks) takeOver() {
	n := h.n
	if !h.ready || !n.IsReceiver() {
		// No replica holds the state: restart empty, like amnesia (gap).
		if !n.MayRestartEmpty() {
			return // the next detector event elects again
		}
		if err := n.Restart(); err != nil {
			// The operators could not be rebuilt: taking over with the
			// old state would be silent corruption, so stay a standby.
			n.Trace(ha.Event{Kind: ha.EvNote, Note: "active-standby: no takeover: " + err.Error()})
			return
		}
		h.queue, h.credit, h.joining = nil, [2]int{}, [2]bool{}
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "no ready secondary left: restarting the fragment with empty state"})
		n.TakeOver(ha.TakeoverOptions{ResetSeq: true})
		h.stats.RestartTakeovers++
		h.ready = true
	} else {
		prev := n.Route(n.Frag()).Primary
		n.TakeOver(ha.TakeoverOptions{Receivers: []string{n.Host()}})
		h.stats.Takeovers++
		// Re-send what the downstream may not have; it drops duplicates by seq.
		h.stats.Resent += int64(n.OutputLen())
		for _, d := range n.Downstream() {
			if !n.Down(d) {
				n.Replay(d, h.relayed)
			}
		}
		if !h.startGrace(prev) {
			h.release()
		}
	}
	h.joining = [2]bool{}
	h.trim = max(h.trim, h.relayed)
	if h.ordered() {
		n.RecordOrder(true)
		h.armShip()
	}
	h.armAck()
	h.recruit()
}

// recruit starts a new secondary on the first unused live spare: it ships
// this primary's state, adds the spare to the receivers, and the spare asks
// the upstreams to replay after the transferred positions.
func (h *hooks) recruit() {
	n := h.n
	if len(h.secondaries()) > 0 {
		return
	}
	if h.credit != [2]int{} {
		// The predecessor's last decisions still wait for their input; the
		// state is consistent only once the node processed it.
		n.SetTimer(recruitRetry, timerRecruit)
		return
	}
	spare := ""
	for _, x := range n.Topology().Frags[n.Frag()].Hosts {
		if !h.retired[x] && !n.Down(x) {
			spare = x
			break
		}
	}
	if spare == "" {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "no spare left: running without a secondary"})
		return
	}
	if h.ordered() {
		h.shipDecisions()
		n.TakeOrderLog()
	}
	m, err := snapshot(n, h.trim, h.shipped)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: spare, Note: fmt.Sprintf("state transfer to %s failed: %v", spare, err)})
		return
	}
	size := m.WireSize()
	n.Work(0, size)
	n.AddCheckpointBytes(size)
	h.stats.Transfers++
	h.stats.TransferBytes += int64(size)
	h.retired[spare] = true
	n.Send(spare, m)
	n.Trace(ha.Event{Kind: ha.EvCheckpointBeg, Peer: spare, Seq: m.Seq, N: int64(size),
		Note: fmt.Sprintf("state transfer to new secondary %s: %d logged tuples", spare, len(m.Tuples))})
	recv := append(slices.Clone(n.Route(n.Frag()).Receivers), spare)
	recv = slices.DeleteFunc(recv, func(x string) bool { return x != n.Host() && n.Down(x) })
	n.SetReceivers(recv)
}

// RouteChanged keeps the roles' bookkeeping in step with the routes.
func (h *hooks) RouteChanged(_, r ha.Route) {
	n := h.n
	if h.fragment() && r.Frag == n.Frag() {
		h.retire(r)
		if n.IsReceiver() && h.ready {
			h.armAck()
			h.requestCatchUp()
		}
	}
	if r.Frag != n.Frag() {
		h.pruneReceivers() // a neighbour's new primary may be the one it waited for
	}
	if !n.IsSink() && r.Frag == n.DownstreamFrag() {
		var keep []string
		for _, x := range h.pendOrd {
			if slices.Contains(r.Receivers, x) {
				h.serveCatchUp(x, h.pending[x])
				delete(h.pending, x)
			} else {
				keep = append(keep, x)
			}
		}
		h.pendOrd = keep
		h.updateTrim()
	}
}
