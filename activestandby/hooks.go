package activestandby

import (
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
	graceFrom        string // a new primary's predecessor, whose decisions it still follows (grace.go)
	// output commit (commit.go): outputs waiting for their decisions'
	// acknowledgement, and what each secondary acknowledged
	points   []commitPoint
	decAcked map[string]uint64

	transfer transferState // a state transfer awaiting its acknowledgement (transferretry.go)
}

func newHooks(n *ha.Node, s *Strategy) *hooks {
	return &hooks{
		n: n, cfg: s.cfg, stats: s.stats,
		acked: map[string]uint64{}, pending: map[string]uint64{}, retired: map[string]bool{}, decAcked: map[string]uint64{},
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
			h.updateCommit() // commit.go
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
		h.resendUncommitted() // commit.go
		h.armShip()
	case timerRecruit:
		if n.IsPrimary() {
			h.recruit()
		}
	case timerPrune:
		h.pruneReceivers()
	case timerGrace:
		h.endGrace()
	case timerTransfer:
		h.retryTransfer()
	}
}

// Message handles the strategy's own messages and filters the input of
// joining and decision-following secondaries.
func (h *hooks) Message(m *ha.Message) bool {
	switch m.Kind {
	case ha.KindAck:
		h.onAck(m)
		return true
	case ha.KindStrategy:
		switch m.Type {
		case msgState:
			h.onState(m)
		case msgStateAck:
			h.onStateAck(m)
		case msgCatchUp:
			h.onCatchUp(m)
		case msgOrder:
			h.onOrder(m)
		case msgOrderNack:
			h.onOrderNack(m)
		case msgOrderAck:
			h.onOrderAck(m)
		default:
			return false
		}
		return true
	case ha.KindData:
		return h.onData(m)
	}
	return false
}

// Output ships, on a primary following ship_decisions, the decisions this
// output depends on before the output itself leaves (the data batch is
// sent when the handler ends, after this message on the way out), so a
// secondary can always reproduce every output the downstream saw. On a
// secondary it records the log size.
func (h *hooks) Output(t *ha.Tuple) {
	if h.ordered() && h.n.IsPrimary() {
		h.shipDecisions()
		h.notePoint(t.Seq) // commit.go
		return
	}
	h.noteLog()
}

// PeerDown makes a primary replace a failed secondary. Taking over from a
// failed primary is the node's election (Successors, TakeOver).
func (h *hooks) PeerDown(string) { h.pruneReceivers() }

// PeerUp lets a primary that was cut off replace the secondaries that
// failed meanwhile, once it sees both sides of its fragment again.
func (h *hooks) PeerUp(string) { h.pruneReceivers() }

// RouteChanged keeps the roles' bookkeeping in step with the routes.
func (h *hooks) RouteChanged(_, r ha.Route) {
	n := h.n
	if h.fragment() && r.Frag == n.Frag() {
		h.retire(r)
		h.updateCommit() // commit.go
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
