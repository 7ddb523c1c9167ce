package ha

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// InputHook is an optional capability of Hooks: it sees every input tuple
// that passed the sequence-number duplicate filter, before processing, and
// may drop it by returning false (deduplication by output id, for example).
// A strategy can turn it off and on again with Node.SetInputHook.
type InputHook interface {
	Input(t *Tuple) bool
}

// NodeConfig configures a node.
type NodeConfig struct {
	Host     string
	Topology *Topology
	Env      Env
	Strategy Strategy
	// Source configures the generator of a source host.
	Source SourceSpec
	// NoFencing turns epoch fencing off: data from any host claiming to be
	// a primary is accepted (to demonstrate split brain).
	NoFencing bool
	// TraceEmits traces every tuple the node emits (EvEmit): verbose, for
	// teaching and debugging.
	TraceEmits bool
	// NoRepair turns off the repair machinery of docs/reliability.md's
	// rules 2 and 3 — gap repair, tail markers, resume retries and route
	// seeking — to measure what it costs (streamha bench); a receiver then
	// takes a gap as lost. Never set it in an experiment.
	NoRepair bool
}

type inPort struct {
	last uint64 // highest seq accepted
	seen bool   // whether last is meaningful for gap detection
}

// Node is one host's single-threaded state machine. The driver (simulator
// or cluster runtime) calls Start, Deliver, Fire, PeerDown and PeerUp one at
// a time; the node acts only through its Env.
type Node struct {
	host       string
	frag       int
	topo       *Topology
	env        Env
	hooks      Hooks
	inHook     InputHook
	copier     CopySender // the Env's optional capability, nil without it
	fencing    bool
	traceEmits bool

	ops   []Operator
	emits []Emit

	routes []Route
	in     [2]inPort
	// times records (seq, event time) of each port's accepted inputs while
	// recordTimes is on (RecordInputTimes).
	recordTimes bool
	times       [2]inputTimes

	// outNext through the first fields of out share one cache line of an
	// allocated node (BenchmarkOutputFieldsShareALine): every emitted tuple
	// touches them. A field added above can split the line.
	outNext   uint64
	outPort   uint8
	retain    bool
	out       outQueue // the retained output
	batch     []Tuple
	pendWork  int
	pendBytes int

	down   map[string]bool
	fenced bool
	gen    *generator

	recordOrder bool
	orderLog    []uint8
	follow      []uint8
	pending     []Tuple

	// catch-up tracking after a takeover: the replay marker per port and
	// which ports still have to reach it.
	catchMark [2]uint64
	catching  uint8
	marked    uint8

	// awaiting holds live output for a new downstream primary until its
	// resume request arrived and was answered, so nothing overtakes the replay.
	awaiting map[string]*hold
	// skipped: downstream receivers declared dead → the output seq after
	// which nothing was sent to them (see node_suspect.go)
	skipped map[string]uint64

	// scratch tuples handed to hooks by pointer without a heap allocation
	outScratch Tuple
	inScratch  Tuple

	// slabs the hot path carves sent batches and data messages from, so
	// that it allocates once per slab instead of once per message, when
	// the Env is no CopySender (see node_alloc.go)
	slabs slabs
	// delivered is the sink's last delivered tuple, lent to Env.Trace.
	delivered Tuple
	// sendScratch is the data message lent to a CopySender Env.
	sendScratch Message
	// swapper is the CopySender's optional capability, nil without it
	// (here, not beside copier: see outNext).
	swapper BatchSwapper

	// resume and gap repair per input port (node_repair.go)
	rep           [2]portRepair
	resumeArmed   bool
	resumeBackoff time.Duration
	// the last replay this node sent: to whom, and up to which seq
	lastReplayTo   string
	lastReplayUpTo uint64
	// tail markers (node_repair.go): armed, and the output seq when armed
	tailArmed bool
	tailAt    uint64
	// election (node_elect.go): a probe's start, and whether a message
	// from outside the fragment arrived since
	probeAt time.Duration
	probing bool
	heard   bool
	// rate limits of route queries and stale-route replies
	routeAsked map[int]uint64    // fragment -> epoch last asked for
	toldStale  map[string]uint64 // host -> epoch last told
	// route seeking (node_route.go): the retry timer is armed, its interval
	seekArmed   bool
	seekBackoff time.Duration
	// output commit (node_gate.go): on, and the last seq that may leave
	gated    bool
	gateUpTo uint64
	// noRepair: NodeConfig.NoRepair
	noRepair bool

	stats NodeStats
}

// NewNode builds the node for cfg.Host.
func NewNode(cfg NodeConfig) (*Node, error) {
	frag, ok := cfg.Topology.FragOf(cfg.Host)
	if !ok {
		return nil, fmt.Errorf("node %q: not in the topology", cfg.Host)
	}
	n := &Node{
		host: cfg.Host, frag: frag, topo: cfg.Topology, env: cfg.Env,
		fencing: !cfg.NoFencing, traceEmits: cfg.TraceEmits, down: map[string]bool{},
		noRepair: cfg.NoRepair,
	}
	n.routes = make([]Route, len(cfg.Topology.Frags)+1)
	for i, f := range cfg.Topology.Frags {
		n.routes[i] = Route{Frag: i, Primary: f.Hosts[0], Receivers: cfg.Strategy.InitialReceivers(f.Hosts)}
	}
	sink := cfg.Topology.SinkFrag()
	n.routes[sink] = Route{Frag: sink, Primary: cfg.Topology.Sink, Receivers: []string{cfg.Topology.Sink}}
	switch {
	case frag == FragSource:
		port := slices.Index(cfg.Topology.Sources, cfg.Host)
		n.outPort = uint8(port)
		if err := cfg.Source.Validate(); err != nil {
			return nil, fmt.Errorf("node %s: %w", cfg.Host, err)
		}
		n.gen = newGenerator(cfg.Source, uint32(port), cfg.Env.Rand())
	case frag < sink:
		if err := n.resetOps(); err != nil {
			return nil, err
		}
	}
	// Every stream starts at seq 1: a first tuple numbered later is a gap
	// (its predecessors were lost) to repair, like any other.
	for p := range n.in {
		n.in[p].seen = n.fencing
	}
	n.hooks = cfg.Strategy.Hooks(n)
	if n.hooks == nil {
		n.hooks = NopHooks{}
	}
	n.inHook, _ = n.hooks.(InputHook)
	n.copier, _ = cfg.Env.(CopySender)
	if n.copier != nil {
		n.swapper, _ = cfg.Env.(BatchSwapper)
	}
	n.stats.Role = n.Role()
	return n, nil
}

func (n *Node) resetOps() error {
	ops, err := n.buildOps()
	if err != nil {
		return err
	}
	n.installOps(ops)
	return nil
}

// buildOps builds a fresh operator pipeline for the node's fragment.
func (n *Node) buildOps() ([]Operator, error) {
	ops, err := n.topo.Frags[n.frag].NewOps()
	if err != nil {
		return nil, fmt.Errorf("node %s: build operators: %w", n.host, err)
	}
	return ops, nil
}

// installOps makes ops the node's operator pipeline.
func (n *Node) installOps(ops []Operator) {
	n.ops = ops
	n.emits = make([]Emit, len(ops))
	for i := range ops {
		if i == len(ops)-1 {
			n.emits[i] = n.output
		} else {
			next := ops[i+1]
			nextEmit := &n.emits[i+1]
			n.emits[i] = func(t Tuple) { next.Process(t, *nextEmit) }
		}
	}
}

// Host is the node's host name.
func (n *Node) Host() string { return n.host }

// Frag is the node's fragment index (FragSource for sources, Topology.SinkFrag for the sink).
func (n *Node) Frag() int { return n.frag }

// Topology is the deployment the node belongs to.
func (n *Node) Topology() *Topology { return n.topo }

// Now is the current time.
func (n *Node) Now() time.Duration { return n.env.Now() }

// Rand is the node's seeded random source.
func (n *Node) Rand() *rand.Rand { return n.env.Rand() }

// Ops is the node's operator pipeline (nil for sources and the sink).
func (n *Node) Ops() []Operator { return n.ops }

// IsSource reports whether the node is a source.
func (n *Node) IsSource() bool { return n.frag == FragSource }

// IsSink reports whether the node is the sink.
func (n *Node) IsSink() bool { return n.frag == n.topo.SinkFrag() }

// Route returns the node's current view of fragment frag's route.
func (n *Node) Route(frag int) Route { return n.routes[frag] }

// Epoch is the node's current epoch for its own fragment.
func (n *Node) Epoch() uint64 {
	if n.frag < 0 {
		return 0
	}
	return n.routes[n.frag].Epoch
}

// IsPrimary reports whether the node currently serves its fragment's output.
func (n *Node) IsPrimary() bool {
	if n.fenced {
		return false
	}
	if n.frag == FragSource || n.IsSink() {
		return true
	}
	return n.routes[n.frag].Primary == n.host
}

// IsReceiver reports whether the node currently receives its fragment's input.
func (n *Node) IsReceiver() bool {
	if n.fenced {
		return false
	}
	if n.frag == FragSource || n.IsSink() {
		return true
	}
	return slices.Contains(n.routes[n.frag].Receivers, n.host)
}

// Fenced reports whether the node learned it was superseded by a newer epoch.
func (n *Node) Fenced() bool { return n.fenced }

// Role is "source", "sink", "primary", "secondary" (receives input but is
// not primary), "standby" or "fenced".
func (n *Node) Role() string {
	switch {
	case n.frag == FragSource:
		return "source"
	case n.IsSink():
		return "sink"
	case n.fenced:
		return "fenced"
	case n.IsPrimary():
		return "primary"
	case n.IsReceiver():
		return "secondary"
	}
	return "standby"
}

// Down reports whether the failure detector declared host dead (and it was not seen alive since).
func (n *Node) Down(host string) bool { return n.down[host] }

// Upstream returns the current primary feeding input port.
func (n *Node) Upstream(port int) string {
	if n.frag == 0 {
		return n.topo.Sources[port]
	}
	if n.frag < 0 {
		return ""
	}
	return n.routes[n.frag-1].Primary
}

// Inputs is the number of input ports of the node.
func (n *Node) Inputs() int {
	switch {
	case n.frag == FragSource:
		return 0
	case n.IsSink():
		return 1
	}
	return max(1, n.topo.Frags[n.frag].Inputs)
}

// DownstreamFrag is the fragment index fed by this node's output.
func (n *Node) DownstreamFrag() int {
	if n.frag == FragSource {
		return 0
	}
	return n.frag + 1
}

// Downstream returns the hosts currently receiving this node's output.
func (n *Node) Downstream() []string {
	if n.IsSink() {
		return nil
	}
	return n.routes[n.DownstreamFrag()].Receivers
}

// NextInLine returns the first host of the node's fragment, in takeover
// order, that is neither declared dead nor fenced-out primary: the host that
// should act when the primary fails. It is computed from this node's view.
func (n *Node) NextInLine() string {
	if n.frag < 0 || n.IsSink() {
		return ""
	}
	prim := n.routes[n.frag].Primary
	for _, h := range n.topo.Frags[n.frag].Hosts {
		if h != prim && !n.down[h] {
			return h
		}
	}
	return ""
}

// SetTimer arms a one-shot timer that calls the hooks' Timer(name).
func (n *Node) SetTimer(d time.Duration, name string) { n.env.SetTimer(d, name) }

// Work charges CPU for the current handler (ops invocations, bytes serialised).
func (n *Node) Work(ops, bytes int) {
	n.pendWork += ops
	n.pendBytes += bytes
}

// Trace records an event stamped with the time and this host.
func (n *Node) Trace(e Event) {
	e.T = n.env.Now()
	if e.Host == "" {
		e.Host = n.host
	}
	n.env.Trace(e)
}

// Send stamps m with this node's identity and epoch and sends it.
func (n *Node) Send(to string, m *Message) {
	n.stamp(m)
	n.env.Send(to, m)
}

// stamp sets m's sender identity and epoch and counts it as sent.
func (n *Node) stamp(m *Message) {
	m.From = n.host
	m.Frag = n.frag
	m.Epoch = n.Epoch()
	size := m.WireSize()
	n.stats.Messages++
	n.stats.Bytes += int64(size)
	if m.Kind == KindData {
		n.stats.DataBytes += int64(size)
	}
}

// sendCopy sends the data tuples ts to host through the Env's CopySender,
// which copies them: the caller keeps ts and may reuse it at once.
func (n *Node) sendCopy(to string, ts []Tuple) {
	m := &n.sendScratch
	*m = Message{Kind: KindData, Stream: n.outPort, Tuples: ts}
	n.stamp(m)
	n.copier.SendCopy(to, m)
	m.Tuples = nil
}

// Broadcast sends a copy of m to every other host of the topology.
func (n *Node) Broadcast(m *Message) {
	for _, h := range n.topo.Hosts() {
		if h != n.host {
			c := *m
			n.Send(h, &c)
		}
	}
}

// Stats returns the node's counters so far.
func (n *Node) Stats() NodeStats {
	s := n.stats
	s.Role = n.Role()
	s.PeakQueue = n.peakQueue()
	s.PeakQueueBytes = s.PeakQueue * tupleWireSize
	if n.gen != nil {
		s.Emitted = n.gen.n
	}
	return s
}

// AddCheckpointBytes counts checkpoint bytes sent by a strategy.
func (n *Node) AddCheckpointBytes(b int) { n.stats.CheckpointBytes += int64(b) }

// SetInputHook sets the InputHook the node calls for every input tuple, nil
// for none. It starts as the strategy's Hooks when they implement
// InputHook. A strategy turns its hook off while it has nothing to do per
// tuple: in cluster mode each call costs cache misses (the hook's code,
// its fields, the tuple's copy) on every message. It takes effect from the
// next input tuple on.
func (n *Node) SetInputHook(h InputHook) { n.inHook = h }

// ---- output queue ----

// SetRetain says whether emitted tuples are kept in the output queue until
// trimmed (needed for any replay). Turning it off drops the queue.
func (n *Node) SetRetain(on bool) {
	n.retain = on
	if !on {
		n.stats.PeakQueue = n.peakQueue()
		n.out = outQueue{}
	}
}

// peakQueue is the most output tuples the node has retained at once.
func (n *Node) peakQueue() int64 { return max(n.stats.PeakQueue, int64(n.out.Max())) }

// OutputLen is the number of retained output tuples.
func (n *Node) OutputLen() int { return n.out.Len() }

// OutputAt is the i-th retained output tuple in seq order, oldest first
// (0 ≤ i < OutputLen). It is the node's own: do not modify it.
func (n *Node) OutputAt(i int) *Tuple { return n.out.At(i) }

// OutputIndex is the position of the first retained output tuple whose
// seq is at least seq: OutputLen when there is none.
func (n *Node) OutputIndex(seq uint64) int { return n.out.Index(seq) }

// AppendOutput appends the retained output tuples at positions [from, to)
// to dst and returns it.
func (n *Node) AppendOutput(dst []Tuple, from, to int) []Tuple { return n.out.AppendTo(dst, from, to) }

// OutputSeq is the seq of the last tuple emitted.
func (n *Node) OutputSeq() uint64 { return n.outNext }

// SetOutputSeq sets the output seq counter (after restoring a checkpoint).
func (n *Node) SetOutputSeq(s uint64) { n.outNext = s }

// SetOutputLog replaces the retained output (after restoring a checkpoint).
func (n *Node) SetOutputLog(ts []Tuple) {
	n.out.Reset()
	for i := range ts {
		n.out.Push(&ts[i])
	}
}

// TrimOutput drops retained tuples with seq ≤ upTo and returns how many it dropped.
func (n *Node) TrimOutput(upTo uint64) int {
	d := n.out.Index(upTo + 1)
	if d == 0 {
		return 0
	}
	n.out.Drop(d)
	n.Trace(Event{Kind: EvTrim, Seq: upTo, N: int64(n.out.Len())})
	return d
}

// Replay sends to host the retained tuples with seq > from, in order.
func (n *Node) Replay(to string, from uint64) {
	i, end := n.out.Index(from+1), n.out.Len()
	if n.gated {
		end = n.out.Index(n.released() + 1) // never past the output commit
	}
	n.Trace(Event{Kind: EvReplayStart, Peer: to, Seq: from, N: int64(end - i)})
	// What this node can no longer provide after from: the receiver takes
	// that hole as lost instead of waiting for it.
	avail := from
	switch {
	case i < end:
		if s := n.out.At(i).Seq; s > from+1 {
			avail = s - 1
		}
	case i == n.out.Len() && n.released() > from:
		avail = n.released() // retains nothing after from
	}
	if avail > from {
		n.Send(to, &Message{Kind: KindData, Stream: n.outPort, Type: ReplayFromType, Seq: avail})
	}
	upTo := n.released()
	n.lastReplayTo, n.lastReplayUpTo = to, upTo
	n.sendRetained(to, i, end)
	// The marker tells the receiver which seq ends the replay, so it can
	// trace when it has caught up.
	n.Send(to, &Message{Kind: KindData, Stream: n.outPort, Type: ReplayEndType, Seq: upTo})
	n.Trace(Event{Kind: EvReplayEnd, Peer: to, N: int64(end - i)})
	// Live output held for to can follow now: nothing overtakes this
	// replay on the link. Waiting for to's resume instead would hold it
	// for ever if the resume was lost, since this replay's end marker
	// already answers the receiver's request.
	n.releaseAwaiting(to)
}

// sendRetained sends the retained outputs from queue index i to end to
// host, in messages of at most 512 tuples.
func (n *Node) sendRetained(to string, i, end int) {
	var scratch []Tuple // a CopySender copies each chunk: one buffer serves them all
	for j := i; j < end; {
		c := min(end-j, 512)
		if n.copier != nil {
			scratch = n.out.AppendTo(scratch[:0], j, j+c)
			n.sendCopy(to, scratch)
		} else {
			n.Send(to, &Message{Kind: KindData, Stream: n.outPort, Tuples: n.out.AppendTo(make([]Tuple, 0, c), j, j+c)})
		}
		j += c
	}
}

// ReplayEndType marks the empty data message that ends a replay; its Seq
// is the sender's last output seq when it replayed.
const ReplayEndType = "replay-end"

// ---- input positions and order ----

// InputSeq is the highest seq accepted on input port.
func (n *Node) InputSeq(port int) uint64 { return n.in[port].last }

// SetInputSeq sets the duplicate filter of input port (after a restore).
func (n *Node) SetInputSeq(port int, seq uint64) {
	n.resetPort(port, seq > 0)
	n.in[port].last = seq
}

// RecordInputTimes turns on a compact record of the sequence numbers and
// event times of the tuples each input port accepts (segments of at most
// 1 ms of event time), or turns it off and forgets it. A strategy that
// learns from its operators (Horizon) the oldest event time their state
// depends on maps it back to an input position with InputCut (upstream
// backup's level-1 acknowledgements). The node keeps the record on its
// input path beside the port's position, so it costs no hook call per
// tuple. The record of a port starts afresh whenever its position does
// (Restart, a new upstream numbering, SetInputSeq).
func (n *Node) RecordInputTimes(on bool) {
	n.recordTimes = on
	if !on {
		n.times = [2]inputTimes{}
	}
}

// InputCut is the largest recorded seq of input port such that every
// recorded input up to it has an event time before horizon, and whether
// there is one: exact when event times ascend, conservative otherwise.
func (n *Node) InputCut(port int, horizon int64) (uint64, bool) { return n.times[port].cut(horizon) }

// LastRecordedInput is the last seq the record of input port holds, and
// whether it holds any.
func (n *Node) LastRecordedInput(port int) (uint64, bool) { return n.times[port].lastSeq() }

// ForgetInputs drops from the record of input port the segments that lie
// entirely at or below upTo.
func (n *Node) ForgetInputs(port int, upTo uint64) { n.times[port].drop(upTo) }

// RecordedInputs is the number of segments the record of input port holds.
func (n *Node) RecordedInputs(port int) int { return n.times[port].size() }

// RecordOrder turns on recording of the input port of every processed
// tuple: the node's non-deterministic interleaving decisions.
func (n *Node) RecordOrder(on bool) { n.recordOrder = on }

// RecordedDecisions is the number of decisions recorded and not yet taken
// with TakeOrderLog.
func (n *Node) RecordedDecisions() int { return len(n.orderLog) }

// TakeOrderLog returns and clears the recorded decisions.
func (n *Node) TakeOrderLog() []uint8 {
	l := n.orderLog
	n.orderLog = nil
	return l
}

// Pending is the number of accepted input tuples waiting for the
// interleaving decisions they must follow (see FollowOrder).
func (n *Node) Pending() int { return len(n.pending) }

// FollowOrder makes the node process inputs in the given port order: a
// tuple from another port waits until the decisions reach it. When the
// decisions run out the node returns to arrival order.
func (n *Node) FollowOrder(decisions []uint8) {
	n.follow = append(n.follow, decisions...)
	n.drainPending()
}

// ---- state ----

// Restart replaces the operator state with empty state and resets the
// output numbering and input filters (a fresh fragment on a spare). It
// builds the new operators first: when that fails it changes nothing.
func (n *Node) Restart() error {
	var ops []Operator
	if n.frag >= 0 && !n.IsSink() {
		var err error
		if ops, err = n.buildOps(); err != nil {
			return err
		}
		n.installOps(ops)
	}
	n.outNext = 0
	n.times = [2]inputTimes{}
	n.rep = [2]portRepair{}
	for p := range n.in {
		n.in[p] = inPort{seen: n.fencing}
		n.rep[p].fresh = n.fencing
	}
	n.out.Reset()
	n.follow, n.pending, n.orderLog = nil, nil, nil
	return nil
}

// TakeoverOptions tune Node.TakeOver.
type TakeoverOptions struct {
	// ResetSeq announces that this node numbers its output afresh.
	ResetSeq bool
	// Receivers are the hosts that will receive the fragment's input; nil
	// means this node alone.
	Receivers []string
	// NoResume skips asking the upstreams to redirect and replay.
	NoResume bool
}

// TakeOver makes this node the primary of its fragment at a new epoch,
// announces the route to every host and asks each upstream to replay what
// follows this node's input positions.
func (n *Node) TakeOver(o TakeoverOptions) {
	old := n.routes[n.frag]
	recv := o.Receivers
	if recv == nil {
		recv = []string{n.host}
	}
	r := Route{Frag: n.frag, Epoch: old.Epoch + 1, Primary: n.host, Receivers: recv, ResetSeq: o.ResetSeq, Resume: !o.NoResume}
	n.routes[n.frag] = r
	n.fenced = false
	n.catching, n.marked = uint8(1<<n.Inputs())-1, 0
	n.Trace(Event{Kind: EvTakeover, Peer: old.Primary, Frag: n.frag, Epoch: r.Epoch})
	n.AnnounceRoute()
	if !o.NoResume {
		for p := 0; p < n.Inputs(); p++ {
			n.requestResume(p, false)
		}
	}
	n.hooks.RouteChanged(old, r)
}

// AnnounceRoute broadcasts this node's current route for its fragment.
func (n *Node) AnnounceRoute() {
	r := n.routes[n.frag]
	n.Broadcast(&Message{Kind: KindRoute, Route: &r})
}

// SetReceivers changes who receives this fragment's input (the primary only) and announces it.
func (n *Node) SetReceivers(recv []string) {
	old := n.routes[n.frag]
	r := old
	r.Receivers = slices.Clone(recv)
	r.Version++ // not the epoch: see Route.Version
	r.ResetSeq, r.Resume = false, false
	n.routes[n.frag] = r
	n.AnnounceRoute()
	n.hooks.RouteChanged(old, r)
}

// Stale reports whether m comes from a host that is not the current primary
// of its fragment at the current epoch (always false with fencing off).
func (n *Node) Stale(m *Message) bool {
	if !n.fencing || m.Frag < 0 || m.Frag >= len(n.routes) {
		return false
	}
	r := n.routes[m.Frag]
	return m.Epoch < r.Epoch || (m.Kind == KindData && m.From != r.Primary)
}

// ---- driver entry points ----

// GenTimer is the timer a source node sets to emit what is due; runtimes
// that account for pending work (ha/inproc) recognise it by this name.
const GenTimer = "ha.gen"

// Start runs when the run begins.
func (n *Node) Start() {
	if n.gen != nil {
		n.env.SetTimer(0, GenTimer)
	}
	n.hooks.Start()
	n.flush()
}

// Fire runs a timer.
func (n *Node) Fire(name string) {
	if name == GenTimer {
		n.generate()
	} else if name == resumeTimer {
		n.retryResumes()
	} else if name == tailTimer {
		n.sendTail()
	} else if name == electTimer {
		n.elect()
	} else if name == seekTimer {
		n.seekRoutes()
	} else if !n.fenced {
		n.hooks.Timer(name)
	}
	n.flush()
}

// PeerDown tells the node the failure detector declared host dead.
func (n *Node) PeerDown(host string) {
	if n.down[host] {
		return
	}
	n.down[host] = true
	n.Trace(Event{Kind: EvDetect, Peer: host})
	n.noteSkipped(host)
	n.hooks.PeerDown(host)
	n.elect()
	n.watchRoutes()
	n.flush()
}

// PeerUp tells the node a host declared dead is alive again.
func (n *Node) PeerUp(host string) {
	if !n.down[host] {
		return
	}
	delete(n.down, host)
	n.Trace(Event{Kind: EvAlive, Peer: host})
	if n.frag >= 0 && !n.IsSink() && host != n.host && host == n.routes[n.frag].Primary {
		// This node may have missed its fragment's routes while it was
		// cut off from the primary: a secondary dropped meanwhile would
		// otherwise take over later from its stale state, believing
		// itself next in line. It asks; the primary does not push its
		// route, which after a partition may be a superseded one.
		n.Send(host, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
	}
	n.resendSkipped(host)
	n.hooks.PeerUp(host)
	n.elect()
	n.watchRoutes()
	n.flush()
}

// Deliver handles one incoming message. Neither the node nor its hooks
// keep m or its Tuples after it returns: the Env may recycle them.
func (n *Node) Deliver(m *Message) {
	if n.probing && m.Frag != n.frag {
		n.heard = true
	}
	if m.Kind == KindResume {
		// Whoever answers the resume (the runtime or a hook), the live
		// output held back meanwhile follows the answer.
		defer n.releaseAwaiting(m.From)
	}
	if m.Kind == KindStrategy && m.Frag == n.frag && n.frag >= 0 && m.Frag < len(n.topo.Frags) && m.Epoch > n.Epoch() {
		// A strategy message from a primary of a newer epoch of this
		// fragment: this node missed its takeover's route.
		n.askRoute(m)
	}
	if !n.hooks.Message(m) {
		switch m.Kind {
		case KindData:
			n.onData(m)
		case KindRoute:
			if m.Route != nil {
				n.onRoute(*m.Route, m.From)
			} else if m.Type == RouteQueryType {
				n.answerRouteQuery(m)
			}
		case KindResume:
			n.onResume(m)
		}
	}
	if m.Kind != KindData {
		// A strategy's message can change the takeover order (a backup
		// announced), a route the primary.
		n.elect()
	}
	n.flush()
}

func (n *Node) generate() {
	next, more := n.gen.due(n.env.Now(), n.output)
	if more && next <= n.env.Now() {
		n.env.SetTimer(0, GenTimer) // a capped burst: continue right away
		return
	}
	if more {
		// Wake at the next tuple's intended time, but at most once per
		// batch period, measured from the intended (not the actual) wake
		// time so that handler costs never make the source drift.
		n.gen.wake = max(next, n.gen.wake+n.gen.spec.Batch)
		n.env.SetTimer(max(0, n.gen.wake-n.env.Now()), GenTimer)
	}
}

func (n *Node) onRoute(r Route, from string) {
	if !n.validRoute(r, from) {
		return
	}
	old := n.routes[r.Frag]
	if !r.supersedes(old, n.topo) {
		if from == r.Primary && (r.Epoch != old.Epoch || r.Primary != old.Primary) {
			// The sender announced a route older than ours: tell it (a
			// primary that missed a takeover learns it was superseded, a
			// takeover made on an old view is made again on the new one).
			n.tellRoute(from, r.Frag)
		}
		return
	}
	n.routes[r.Frag] = r
	n.Trace(Event{Kind: EvRoute, Peer: r.Primary, Frag: r.Frag, Epoch: r.Epoch})
	if r.Frag == n.frag && r.Primary != n.host && !slices.Contains(r.Receivers, n.host) && old.Primary == n.host && !n.fenced {
		n.fenced = true
		n.Trace(Event{Kind: EvFenced, Peer: r.Primary, Epoch: r.Epoch, Note: "superseded by a newer epoch"})
	}
	if r.Frag == n.frag-1 && n.IsReceiver() {
		if r.ResetSeq {
			// The new upstream numbers from 1: a later first tuple is a gap.
			n.resetPort(0, n.fencing)
		}
		if n.rep[0].pending && r.Primary != old.Primary {
			n.sendResume(0) // to whoever now holds the data
		}
	}
	if r.Frag == n.DownstreamFrag() && !n.IsSink() {
		for h := range n.awaiting {
			if h != r.Primary {
				delete(n.awaiting, h) // superseded before it asked
			}
		}
		// Only a primary is asked to resume: a secondary or spare that
		// held output for it would keep holding it after its own takeover.
		if r.Resume && r.Primary != old.Primary && n.IsPrimary() {
			n.holdFor(r.Primary)
		}
	}
	n.hooks.RouteChanged(old, r)
}

// onResume answers a resume request from the downstream fragment's primary
// (a takeover, or a gap repair) or from one of its receivers (a gap
// repair) with a replay of the retained output after the requested seq.
func (n *Node) onResume(m *Message) {
	if m.Frag != n.DownstreamFrag() || n.Stale(m) || !n.IsPrimary() {
		return
	}
	if r := n.routes[m.Frag]; r.Primary != m.From && !slices.Contains(r.Receivers, m.From) {
		return
	}
	n.Replay(m.From, m.Seq)
}

func (n *Node) onData(m *Message) {
	if n.Stale(m) {
		n.stats.Fenced++
		n.Trace(Event{Kind: EvFenced, Peer: m.From, Epoch: m.Epoch, N: int64(len(m.Tuples)), Note: "dropped data from a stale epoch"})
		n.staleData(m)
		return
	}
	if !n.IsReceiver() || int(m.Stream) >= n.Inputs() {
		return
	}
	p := int(m.Stream)
	in := &n.in[p]
	switch m.Type {
	case ReplayEndType:
		if n.catching&(1<<m.Stream) != 0 {
			n.catchMark[m.Stream] = m.Seq
			n.marked |= 1 << m.Stream
			n.checkCaughtUp(m.Stream)
		}
		n.resumeAnswered(p)
	case TailType:
		if in.seen && m.Seq > in.last {
			n.askRepair(p, "the upstream sent more than arrived: asking it to resend")
		}
	case ReplayFromType:
		switch {
		case n.rep[p].fresh:
			// The replay after a restart starts after m.Seq: nothing lost.
			n.rep[p].fresh = false
			in.last = max(in.last, m.Seq)
			n.drainHeld(p)
		case !in.seen:
			// A fresh position: the replay simply starts after m.Seq.
			in.last, in.seen = m.Seq, true
		case m.Seq > in.last:
			n.skipTo(p, m.Seq, m.From)
		}
	}
	for i := range m.Tuples {
		t := &m.Tuples[i]
		if t.Seq <= in.last {
			n.stats.Duplicates++
			continue
		}
		if in.seen && t.Seq > in.last+1 {
			if n.fencing && !n.noRepair {
				n.holdBeyondGap(p, t)
				continue
			}
			// Without epochs a receiver cannot tell whose numbering a
			// gap belongs to (a zombie's or the new primary's): it takes
			// the gap as it comes, and split brain shows.
			n.noteGap(p, t.Seq-1, m.From)
		}
		n.accept(m.Stream, *t)
		if len(n.rep[p].held) > 0 {
			n.drainHeld(p)
		}
	}
	if len(n.pending) > 0 {
		n.drainPending()
	}
}

// accept takes input tuple t, next in seq order on port, and processes it
// (or queues it behind the interleaving decisions it must follow).
func (n *Node) accept(port uint8, t Tuple) {
	in := &n.in[port]
	in.last, in.seen = t.Seq, true
	n.rep[port].fresh = false
	t.Stream = port
	if n.recordTimes {
		n.times[port].add(t.Seq, t.Time)
	}
	if n.inHook != nil {
		n.inScratch = t
		if !n.inHook.Input(&n.inScratch) {
			return
		}
		t = n.inScratch
	}
	if n.follow != nil || len(n.pending) > 0 {
		n.pending = append(n.pending, t)
		return
	}
	n.process(t)
}

func (n *Node) drainPending() {
	for len(n.pending) > 0 {
		if len(n.follow) == 0 {
			n.follow = nil
			p := n.pending
			n.pending = nil
			for _, t := range p {
				n.process(t)
			}
			return
		}
		i := slices.IndexFunc(n.pending, func(t Tuple) bool { return t.Stream == n.follow[0] })
		if i < 0 {
			return
		}
		t := n.pending[i]
		n.pending = slices.Delete(n.pending, i, i+1)
		n.follow = n.follow[1:]
		n.process(t)
	}
	if len(n.follow) == 0 {
		n.follow = nil
	}
}

// checkCaughtUp traces EvCaughtUp once every input port has processed
// everything its upstream replayed after a takeover.
func (n *Node) checkCaughtUp(port uint8) {
	if n.marked&(1<<port) == 0 || n.in[port].last < n.catchMark[port] || len(n.pending) > 0 {
		return
	}
	n.catching &^= 1 << port
	if n.catching == 0 {
		n.Trace(Event{Kind: EvCaughtUp, Frag: n.frag, Epoch: n.Epoch()})
	}
}

func (n *Node) process(t Tuple) {
	n.stats.Tuples++
	if n.recordOrder {
		n.orderLog = append(n.orderLog, t.Stream)
	}
	if n.IsSink() {
		if t.IsEnd() {
			return // the end of a stream is no output
		}
		n.pendWork++
		n.delivered = t
		n.Trace(Event{Kind: EvDeliver, Tuple: &n.delivered})
		return
	}
	if len(n.ops) == 0 {
		n.pendWork++
		n.output(t)
		return
	}
	n.pendWork += len(n.ops)
	n.ops[0].Process(t, n.emits[0])
	if n.catching&(1<<t.Stream) != 0 {
		n.checkCaughtUp(t.Stream)
	}
}

// output assigns the next seq to t, retains it if asked, and queues it for
// the downstream when this node is primary.
func (n *Node) output(t Tuple) {
	n.outNext++
	t.Seq = n.outNext
	t.Stream = n.outPort
	if n.retain {
		n.out.Push(&t)
	}
	if n.IsPrimary() {
		n.batch = append(n.batch, t)
	}
	if n.traceEmits {
		tt := t
		n.Trace(Event{Kind: EvEmit, Seq: t.Seq, Epoch: n.Epoch(), Note: n.Role(), Tuple: &tt})
	}
	n.outScratch = t
	n.hooks.Output(&n.outScratch)
}

// flush charges the handler's work and sends the batched output.
func (n *Node) flush() {
	if n.pendWork > 0 || n.pendBytes > 0 {
		n.stats.Work += int64(n.pendWork)
		n.stats.WorkBytes += int64(n.pendBytes)
		n.env.Work(n.pendWork, n.pendBytes)
		n.pendWork, n.pendBytes = 0, 0
	}
	if len(n.batch) == 0 {
		return
	}
	if !n.IsPrimary() {
		n.batch = n.batch[:0]
		return
	}
	if n.gated {
		if n.gateBatch(); len(n.batch) == 0 {
			return
		}
	}
	b := n.batch
	var (
		out  []Tuple
		last string // with a BatchSwapper: the receiver the batch itself goes to
	)
	for _, h := range n.Downstream() {
		if len(n.down) > 0 && n.down[h] {
			continue
		}
		if held, ok := n.awaiting[h]; ok {
			n.keep(held, b) // never past the hold: the replay must come first
			continue
		}
		if n.swapper != nil {
			if last != "" {
				n.sendCopy(last, b)
			}
			last = h
			continue
		}
		if n.copier != nil {
			n.sendCopy(h, b)
			continue
		}
		if out == nil {
			out = n.outgoing()
		}
		m := n.slabs.message()
		m.Kind, m.Stream, m.Tuples = KindData, n.outPort, out
		n.Send(h, m)
	}
	if last != "" {
		m := &n.sendScratch
		*m = Message{Kind: KindData, Stream: n.outPort, Tuples: b}
		n.stamp(m)
		n.batch = n.swapper.SendSwap(last, m)
		m.Tuples = nil
	}
	n.batch = n.batch[:0]
	n.armTail()
}

// outgoing returns the batched output for sending through an Env that is
// no CopySender. A retaining node sends the queued copies themselves when
// they lie in one block of its output queue, so each output tuple is
// written once, as without retention, not a second time into a slab.
func (n *Node) outgoing() []Tuple {
	if n.retain {
		if ts, ok := n.out.Lend(n.batch); ok {
			return ts
		}
	}
	return n.slabs.take(&n.batch)
}
