package upstreambackup

import (
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// tickTimer is the name of the periodic ack timer.
const tickTimer = "ub.tick"

// pend is a level-1 candidate: input seq cut, releasable once the
// downstream acknowledged (level 0) our outputs up to out.
type pend struct{ cut, out uint64 }

// ageMark says that the queued tuples from seq on (up to the next mark)
// were emitted at at.
type ageMark struct {
	seq uint64
	at  time.Duration
}

// hooks is one node's upstream-backup behaviour. Sources and fragment
// hosts keep an output queue (the upstream side); fragment hosts and the
// sink acknowledge their inputs (the downstream side).
//
// The fields read for every tuple come first: in cluster mode a node loop
// wakes once per message after other processes ran, and every cache line a
// message touches is a miss (docs/benchmarks.md). Output and Input read
// only the first 64 bytes (BenchmarkHotFieldsShareALine). The struct is 64-byte
// aligned as long as it stays within 512 bytes: larger objects with
// pointers get an 8-byte allocation header in front.
type hooks struct {
	ha.NopHooks
	n         *ha.Node
	peak      int64         // st.peak, read here for every output
	order     timeOrder     // whether the output came in event-time order
	maxTuples int           // cfg.MaxTuples
	maxAge    time.Duration // cfg.MaxAge
	ticking   bool          // the ack timer is armed
	records   bool          // the node records input times (the fragment has a Horizon operator)
	filters   bool          // dropWin or mem is set: Input may drop tuples

	mem     [2]*idMemory // dedup memory (nil when off or fed by a source)
	dropWin [2]floor     // window results starting at or before this are incomplete
	told    floor        // as a new primary: the incomplete bound it tells each downstream primary
	cfg     Config
	st      *hostStats

	// upstream side: this node's output queue.
	outPort    uint8
	l0, l1     uint64 // the downstream's level-0 and level-1 points on our output
	logFloor   floor  // largest event time dropped from our queue
	sentOwn    floor  // floors last sent downstream
	sentRelay  floor
	floorDirty bool // send the floors at the next tick even if unchanged
	ages       []ageMark

	// downstream side, per input port (and mem, dropWin, in above).
	sentL0   [2]uint64
	sentL1   [2]uint64
	pending  [2][]pend
	upFloor  [2]floor // the floor of our upstream's queue
	windowed bool     // the fragment holds a window operator
	// times records (seq, event time) of each port's accepted inputs when
	// records is on: Input adds to it, ackInputs maps the operators'
	// horizon to an input position with it.
	times [2]inputTimes

	start time.Duration // when the run started (the ack rounds' phase)
}

func newHooks(n *ha.Node, cfg Config, rs *runStats) *hooks {
	st := rs.host(n.Host())
	h := &hooks{n: n, cfg: cfg, st: st, peak: st.peak, maxTuples: cfg.MaxTuples, maxAge: cfg.MaxAge}
	if n.IsSource() {
		h.outPort = uint8(slices.Index(n.Topology().Sources, n.Host()))
	}
	for _, op := range n.Ops() {
		if _, ok := op.(ha.Horizon); ok {
			h.records = !n.IsSink()
			h.windowed = h.windowed || op.Class() == ha.ConvergentCapable
		}
	}
	h.resetDown()
	return h
}

// resetUp forgets the output-queue side (after a restart).
func (h *hooks) resetUp() {
	h.l0, h.l1 = 0, 0
	h.logFloor, h.sentOwn, h.sentRelay = floor{}, floor{}, floor{}
	h.order = timeOrder{}
	h.floorDirty = true
	h.ages = nil
}

// resetDown forgets the input side (at creation and after a restart).
func (h *hooks) resetDown() {
	for p := range h.mem {
		h.resetPort(p)
		h.upFloor[p], h.dropWin[p] = floor{}, floor{}
		h.mem[p] = nil
		if h.cfg.Dedup && !h.n.IsSource() && h.n.Frag() > 0 {
			h.mem[p] = newIDMemory()
			h.mem[p].byID = h.n.Planted().Has(ha.PlantDedupByID)
		}
	}
	h.syncInputHook()
}

// resetPort forgets the numbering-dependent records of one input port
// (the upstream numbers its output afresh; the node's input-time record
// starts afresh with the port's position).
func (h *hooks) resetPort(p int) {
	h.pending[p] = nil
	h.sentL0[p], h.sentL1[p] = 0, 0
	h.times[p].reset()
}

// Start turns retention (and, with a Horizon operator, the input-time
// record) on and arms the ack timer.
func (h *hooks) Start() {
	if !h.n.IsSink() {
		h.n.SetRetain(true)
	}
	h.start = h.n.Now()
	h.armTick(h.cfg.AckInterval)
	h.syncInputHook()
}

// armTick arms the ack timer to fire after d on the hosts that take part
// in the ack rounds: a spare has nothing to acknowledge or trim, and does
// not wake every ack interval for nothing until it takes over; nor does a
// source with no floors to send and no max_age to enforce.
func (h *hooks) armTick(d time.Duration) {
	n := h.n
	if h.ticking || !(n.IsSource() || n.IsSink() || n.IsPrimary()) {
		return
	}
	if n.IsSource() && !h.alwaysBusy() {
		return
	}
	h.ticking = true
	n.SetTimer(d, tickTimer)
	h.syncInputHook()
}

// syncInputHook has the node call Input only while it has work for every
// tuple: input times to record (a fragment with a Horizon operator),
// stopped ack rounds to restart, window results to drop as incomplete or a
// dedup memory to feed. Otherwise (a busy host without a window or dedup)
// the input path costs what it costs without upstream backup.
func (h *hooks) syncInputHook() {
	h.filters = h.dropWin[0].ok || h.dropWin[1].ok || h.mem[0] != nil || h.mem[1] != nil
	if h.needsInput() {
		h.n.SetInputHook(h)
	} else {
		h.n.SetInputHook(nil)
	}
}

// needsInput reports whether Input has work for every tuple (see syncInputHook).
func (h *hooks) needsInput() bool { return h.records || !h.ticking || h.filters }

// armTickInPhase arms the ack timer for the next round boundary, in phase
// with the rounds of the hosts that ticked from the start.
func (h *hooks) armTickInPhase() {
	since := (h.n.Now() - h.start) % h.cfg.AckInterval
	h.armTick(h.cfg.AckInterval - since)
}

// Timer runs the periodic ack round. A round that finds nothing to do
// stops the rounds until the next input arrives (Input re-arms them).
func (h *hooks) Timer(name string) {
	if name != tickTimer {
		return
	}
	h.ticking = false
	h.st.rounds++
	if h.idle() {
		h.syncInputHook() // the next input restarts the rounds
		return
	}
	h.armTick(h.cfg.AckInterval)
	h.tick()
}

// idle reports whether an ack round would do nothing, and no later round
// could either until an input arrives: every input is acknowledged at both
// levels, no level-1 candidate waits for the downstream, and there is no
// queue floor or age bound to keep. C and the sink of the default query
// get input once a second; without this they woke ten times a second.
func (h *hooks) idle() bool {
	n := h.n
	if h.alwaysBusy() {
		return false
	}
	for p := 0; p < n.Inputs(); p++ {
		if n.IsSink() {
			if n.InputSeq(p) > h.sentL1[p] {
				return false
			}
			continue
		}
		if n.InputSeq(p) > h.sentL0[p] || len(h.pending[p]) > 0 || h.unreleased(p) {
			return false
		}
	}
	return true
}

// alwaysBusy reports whether every ack round has work whatever the input:
// queue floors to send (with dedup) or a max_age to enforce. Only then does
// a source take part in the rounds.
func (h *hooks) alwaysBusy() bool { return h.sendsFloors() || h.cfg.MaxAge > 0 }

func (h *hooks) tick() {
	n := h.n
	switch {
	case n.IsSource():
		h.enforceAge(false)
		h.sendFloors()
	case n.IsSink():
		// Level 0 = level 1: the sink holds no state and feeds nobody.
		for p := 0; p < n.Inputs(); p++ {
			if s := n.InputSeq(p); s > h.sentL1[p] {
				h.sendAck(p, s, 1, 0)
				h.sentL1[p] = s
			}
		}
	case n.IsPrimary():
		h.enforceAge(false)
		h.ackInputs()
		h.sendFloors()
	}
}

// Message handles acks, floors and the replay request.
func (h *hooks) Message(m *ha.Message) bool {
	switch m.Kind {
	case ha.KindAck:
		h.onAck(m)
		return true
	case ha.KindResume:
		h.onResume(m)
		return false // the node replays the queue
	case ha.KindStrategy:
		switch m.Type {
		case msgFloor:
			h.onFloor(m)
			return true
		case msgReplayFloor:
			h.onReplayFloor(m)
			return true
		case msgIncomplete:
			h.onIncomplete(m)
			return true
		}
	}
	return false
}

// fromDownstream reports whether m comes from our downstream's current primary.
func (h *hooks) fromDownstream(m *ha.Message) bool {
	n := h.n
	return !n.IsSink() && m.Frag == n.DownstreamFrag() && !n.Stale(m) && n.Route(m.Frag).Primary == m.From
}

// fromUpstream returns the input port m arrived on when it comes from
// that port's current upstream primary.
func (h *hooks) fromUpstream(m *ha.Message) (int, bool) {
	n := h.n
	p := int(m.Stream)
	if n.IsSource() || p >= n.Inputs() || n.Upstream(p) != m.From || n.Stale(m) {
		return 0, false
	}
	return p, true
}

// Input implements ha.InputHook: it records the input's event time, restarts
// stopped ack rounds, then drops incomplete window results and, with dedup,
// outputs already received. The node calls it for every input its port
// accepted (seq order, no duplicates) while one of these can happen
// (syncInputHook).
func (h *hooks) Input(t *ha.Tuple) bool {
	p := int(t.Stream)
	if h.records {
		h.times[p].add(t.Seq, t.Time)
	}
	if !h.ticking {
		h.armTickInPhase() // the rounds stopped while there was nothing to acknowledge
	}
	if !h.filters {
		return true
	}
	if w := h.dropWin[p]; w.ok && t.ID.Kind == ha.IDWindow && t.ID.X <= w.t {
		h.st.incomplete++
		return false
	}
	if mem := h.mem[p]; mem != nil {
		if !mem.admit(t.ID, t.Time) {
			h.st.dedupDropped++
			return false
		}
		h.st.dedupPeak = max(h.st.dedupPeak, mem.size())
	}
	return true
}

// RouteChanged reacts to a replaced neighbour.
func (h *hooks) RouteChanged(old, nw ha.Route) {
	n := h.n
	if !n.IsSink() && nw.Frag == n.DownstreamFrag() && nw.Primary != old.Primary {
		// A new downstream primary: it has received nothing yet.
		h.l0 = 0
		h.floorDirty = true
	}
	if !n.IsSource() && nw.Frag == n.Frag()-1 && nw.Primary != old.Primary {
		if nw.ResetSeq {
			h.resetPort(0)
		}
		h.upFloor[0], h.dropWin[0] = floor{}, floor{}
		h.syncInputHook()
	}
}

// Successors implements ha.Successor: the topology's order (nil).
func (h *hooks) Successors() []string { return nil }

// TakeOver implements ha.Successor: this host starts the failed fragment
// with empty state and fresh numbering, and the upstream queues replay.
func (h *hooks) TakeOver() {
	n := h.n
	if err := n.Restart(); err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: n.Route(n.Frag()).Primary, Note: "upstream-backup: cannot take over: " + err.Error()})
		return
	}
	h.resetUp()
	h.resetDown()
	n.TakeOver(ha.TakeoverOptions{ResetSeq: true})
	h.armTickInPhase()
	h.syncInputHook()
}
