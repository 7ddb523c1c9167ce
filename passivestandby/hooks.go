package passivestandby

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// hooks is one node's passive-standby behaviour. Sources trim on
// acknowledgements; the sink acknowledges; fragment hosts are primary or
// backup (or idle spares). Each role keeps its state in a struct of its
// own (primary.go, backup.go); a host changes role without losing the
// others' state (a backup that takes over keeps what it learnt of the
// fragment's backups).
type hooks struct {
	ha.NopHooks
	n   *ha.Node
	s   *Strategy
	cfg Config

	primaryState
	backupState
	upstreamState
	sinkState
}

// upstreamState is a primary's (or source's) part as the upstream of a new
// downstream primary.
type upstreamState struct {
	// replayedTo and replayedEpoch name the new downstream primary that
	// was replayed to when its route arrived (its first resume is then
	// answered already).
	replayedTo    string
	replayedEpoch uint64
}

// sinkState is the sink's: the acknowledgement last sent, and to whom.
type sinkState struct {
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
	case timerHold:
		h.endHold()
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

// PeerDown replaces a failed backup and takes over from a failed primary.
func (h *hooks) PeerDown(host string) {
	if !h.isFragHost() {
		return
	}
	if h.n.IsPrimary() && host == h.backup {
		h.holdAfterFailedBackup()
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

// Sources, sink and trimming.

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
