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

// horizon is the oldest event time any operator's state depends on.
func (h *hooks) horizon() (int64, bool) {
	var (
		oldest int64
		has    bool
	)
	for _, op := range h.n.Ops() {
		hz, ok := op.(ha.Horizon)
		if !ok {
			continue
		}
		if t, ok := hz.Oldest(); ok && (!has || t < oldest) {
			oldest, has = t, true
		}
	}
	return oldest, has
}

// ackInputs sends the level-0 acks and the level-1 acks whose derived
// outputs the downstream has received.
func (h *hooks) ackInputs() {
	n := h.n
	hz, has := h.horizon()
	for p := 0; p < n.Inputs(); p++ {
		var l0 uint64 // the level-0 point to send, 0 = none
		if s := n.InputSeq(p); s > h.sentL0[p] {
			l0 = s
		}
		var (
			cut uint64
			ok  bool
		)
		if has {
			cut, ok = h.times[p].cut(hz)
		} else {
			cut, ok = h.lastInput(p)
		}
		last := h.sentL1[p]
		if k := len(h.pending[p]); k > 0 {
			last = h.pending[p][k-1].cut
		}
		if ok && cut > last {
			// Every output derived from inputs up to cut has been emitted:
			// they no longer affect any state.
			h.pending[p] = append(h.pending[p], pend{cut: cut, out: n.OutputSeq()})
		}
		rel := -1
		for i, e := range h.pending[p] {
			if e.out <= h.l0 {
				rel = i
			}
		}
		if rel < 0 {
			if l0 > 0 && h.sendAck(p, l0, 0, 0) {
				h.sentL0[p] = l0
			}
			continue
		}
		// One message carries both levels.
		cut = h.pending[p][rel].cut
		if h.sendAck(p, cut, 1, l0) {
			h.sentL1[p] = cut
			h.sentL0[p] = max(h.sentL0[p], l0)
			// In place: slicing off the front left the next append no room,
			// an allocation in nearly every round.
			h.pending[p] = append(h.pending[p][:0], h.pending[p][rel+1:]...)
			h.times[p].drop(cut)
		}
	}
}

// lastInput is the last input seq of port p that is not yet released at
// level 1, and whether there is one. Without a Horizon operator the node
// records no input times: no state depends on any input, so the node's
// input position serves.
func (h *hooks) lastInput(p int) (uint64, bool) {
	if h.records {
		return h.times[p].lastSeq()
	}
	s := h.n.InputSeq(p)
	return s, s > h.sentL1[p]
}

// unreleased reports whether port p has inputs not yet released at level 1.
func (h *hooks) unreleased(p int) bool {
	if h.records {
		return h.times[p].size() > 0
	}
	return h.n.InputSeq(p) > h.sentL1[p]
}

// sendAck sends a KindAck of the given level up to seq to the upstream of
// port p, carrying the level-0 point l0 too when it is beyond seq; false
// when that upstream is known to be down.
func (h *hooks) sendAck(p int, seq uint64, level uint8, l0 uint64) bool {
	n := h.n
	to := n.Upstream(p)
	if to == "" || n.Down(to) {
		return false
	}
	var epoch uint64
	if up := n.Frag() - 1; up >= 0 {
		epoch = n.Route(up).Epoch
	}
	if l0 <= seq {
		l0 = 0
	}
	n.Send(to, &ha.Message{Kind: ha.KindAck, Stream: uint8(p), Seq: seq, Level: level, Body: encodeAck(epoch, l0)})
	h.st.acks++
	return true
}

// sendsFloors reports whether the ack rounds carry queue floors: floors
// only bound the dedup memories (onFloor), so without dedup none are sent.
func (h *hooks) sendsFloors() bool { return h.cfg.Dedup }

// sendFloors tells the downstream primary the floor of our queue and the
// relayed floor of our upstreams' queues, when they changed.
func (h *hooks) sendFloors() {
	if !h.sendsFloors() {
		return
	}
	n := h.n
	relay := floor{}
	if !n.IsSource() {
		relay = minFloor(h.upFloor[:n.Inputs()])
	}
	if !h.floorDirty && h.logFloor == h.sentOwn && relay == h.sentRelay {
		return
	}
	if !h.logFloor.ok && !relay.ok {
		h.floorDirty = false
		return
	}
	to := n.Route(n.DownstreamFrag()).Primary
	if n.Down(to) {
		return
	}
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: msgFloor, Stream: h.outPort, Body: encodeFloors(h.logFloor, relay)})
	h.sentOwn, h.sentRelay, h.floorDirty = h.logFloor, relay, false
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

func (h *hooks) onAck(m *ha.Message) {
	n := h.n
	if !h.fromDownstream(m) {
		return
	}
	// The ack must be about our own numbering: the acknowledger's view of
	// our epoch must be current, and it cannot acknowledge unsent tuples.
	ep, l0, err := decodeAck(m.Body)
	if err != nil || ep != n.Epoch() || max(m.Seq, l0) > n.OutputSeq() {
		return
	}
	h.l0 = max(h.l0, m.Seq, l0) // level 1 implies level 0
	if m.Level >= 1 && m.Seq > h.l1 {
		h.l1 = m.Seq
		h.st.level1Advances++
		h.trim(m.Seq)
	}
}

// trim drops queued tuples with seq ≤ upTo, raising the queue floor to the
// largest event time dropped; it returns how many it dropped.
func (h *hooks) trim(upTo uint64) int {
	n := h.n
	k := n.OutputIndex(upTo + 1)
	if k == 0 {
		return 0
	}
	if h.order.inOrderFrom(n.OutputAt(0).Seq) {
		// The last tuple dropped has the largest time of all dropped so
		// far: reading it spares a scan of the dropped tuples, cold memory
		// in cluster mode.
		h.logFloor = floor{t: n.OutputAt(k - 1).Time, ok: true}
	} else {
		for i := range k {
			if t := n.OutputAt(i).Time; !h.logFloor.ok || t > h.logFloor.t {
				h.logFloor = floor{t: t, ok: true}
			}
		}
	}
	n.TrimOutput(upTo)
	for len(h.ages) > 1 && h.ages[1].seq <= upTo+1 {
		h.ages = h.ages[1:]
	}
	return k
}

// Output tracks the queue and applies the retention bound.
func (h *hooks) Output(t *ha.Tuple) {
	n := h.n
	h.order.note(t.Seq, t.Time)
	if h.maxAge > 0 {
		// Ages are only needed for max_age; on a real clock every tuple has
		// its own time, so recording them always cost a mark per tuple.
		if now := n.Now(); len(h.ages) == 0 || h.ages[len(h.ages)-1].at != now {
			h.ages = append(h.ages, ageMark{seq: t.Seq, at: now})
		}
	}
	q := n.OutputLen()
	if int64(q) > h.peak {
		h.peak = int64(q)
		h.st.peak, h.st.peakAt = h.peak, n.Now()
	}
	if mx := h.maxTuples; mx > 0 && q >= mx {
		// Trim in chunks of 1/16 of the bound so the queue never exceeds it
		// and trims stay rare.
		drop := q - mx + max(1, mx/16)
		h.st.retentionDrops += int64(h.trim(n.OutputAt(drop - 1).Seq))
	}
	if h.maxAge > 0 {
		h.enforceAge(true)
	}
}

// enforceAge drops queued tuples older than max_age. With slack it waits
// until the oldest is 1/16 of max_age past the bound, so trims stay rare.
func (h *hooks) enforceAge(slack bool) {
	age := h.maxAge
	if age <= 0 || len(h.ages) == 0 {
		return
	}
	cutoff := h.n.Now() - age
	if slack {
		cutoff -= age / 16
	}
	if h.ages[0].at >= cutoff {
		return
	}
	cutoff = h.n.Now() - age
	i := 0
	for i+1 < len(h.ages) && h.ages[i+1].at < cutoff {
		i++
	}
	upTo := h.n.OutputSeq()
	if i+1 < len(h.ages) {
		upTo = h.ages[i+1].seq - 1
	}
	h.st.retentionDrops += int64(h.trim(upTo))
	if i+1 == len(h.ages) {
		h.ages = nil
	}
}

// onResume runs on the upstream when a new primary asks for the replay:
// it first tells it the floor of the queue about to be replayed.
func (h *hooks) onResume(m *ha.Message) {
	if !h.fromDownstream(m) || m.Type == ha.ResumeRepairType {
		return // a gap repair restarts nothing: no floor to apply
	}
	h.n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgReplayFloor, Stream: h.outPort, Body: encodeFloors(h.logFloor)})
	if h.told.ok && !h.n.Planted().Has(ha.PlantLostIncomplete) {
		// A downstream that restarted too (adjacent failures) replays this
		// node's queue from its start: the incomplete bound told to its
		// failed predecessor must precede the replay, or the rebuilt
		// windows' partial results reach the sink a second time.
		h.n.Send(m.From, &ha.Message{Kind: ha.KindStrategy, Type: msgIncomplete, Stream: h.outPort, Body: encodeFloors(h.told)})
	}
}

// onFloor records our upstream's queue floor and forgets remembered ids
// that no replay can bring back.
func (h *hooks) onFloor(m *ha.Message) {
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 2)
	if err != nil {
		return
	}
	if fs[0].ok {
		h.upFloor[p] = fs[0]
	}
	if mem := h.mem[p]; mem != nil && fs[1].ok {
		mem.forget(fs[1].t)
	}
}

// onReplayFloor runs on a new primary: windows starting at or before the
// floor of the replayed queue cannot be rebuilt completely, so a windowed
// fragment tells its downstream to drop them.
func (h *hooks) onReplayFloor(m *ha.Message) {
	n := h.n
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 1)
	if err != nil || !fs[0].ok {
		return
	}
	h.upFloor[p] = fs[0]
	if !h.windowed {
		return
	}
	to := n.Route(n.DownstreamFrag()).Primary
	if !h.told.ok || fs[0].t > h.told.t {
		h.told = fs[0]
	}
	n.Send(to, &ha.Message{Kind: ha.KindStrategy, Type: msgIncomplete, Stream: h.outPort, Body: encodeFloors(fs[0])})
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: to, Seq: uint64(p),
		Note: "upstream-backup: window results starting at or before " + time.Duration(fs[0].t).String() + " are incomplete after the replay"})
}

// onIncomplete records the incomplete-window bound of a new upstream primary.
func (h *hooks) onIncomplete(m *ha.Message) {
	p, ok := h.fromUpstream(m)
	if !ok {
		return
	}
	fs, err := decodeFloors(m.Body, 1)
	if err != nil || !fs[0].ok {
		return
	}
	if !h.dropWin[p].ok || fs[0].t > h.dropWin[p].t {
		h.dropWin[p] = fs[0]
	}
	h.syncInputHook()
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
