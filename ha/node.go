package ha

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

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
	// Planted re-introduces known protocol bugs (planted.go), for the
	// soak's self-test only. Never set it in an experiment.
	Planted Planted
}

type inPort struct {
	last uint64 // highest seq accepted
	seen bool   // whether last is meaningful for gap detection
}

// Node is one host's single-threaded state machine. The driver (simulator
// or cluster runtime) calls Start, Deliver, Fire, PeerDown and PeerUp one at
// a time; the node acts only through its Env. Drivers use the methods of
// Driver (driver.go), a strategy's hooks those of Runtime (strategy.go).
type Node struct {
	host       string
	frag       int
	topo       *Topology
	env        Env
	hooks      Hooks
	inHook     InputHook
	fencing    bool
	traceEmits bool

	ops   []Operator
	emits []Emit

	routes []Route
	in     [2]inPort

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
	// merge holds, per input port, accepted tuples not yet delivered while
	// a two-input fragment catches up (see node_merge.go); ended says a
	// port accepted its source's end of stream.
	merge [2][]Tuple
	ended [2]bool

	// awaiting holds live output for a new downstream primary until its
	// resume request arrived and was answered, so nothing overtakes the replay.
	awaiting map[string]*hold
	// skipped: downstream receivers declared dead → the output seq after
	// which nothing was sent to them (see node_suspect.go)
	skipped map[string]uint64

	// scratch tuples handed to hooks by pointer without a heap allocation
	outScratch Tuple
	inScratch  Tuple

	// delivered is the sink's last delivered tuple, lent to Env.Trace.
	delivered Tuple
	// sendScratch is the data message lent to Env.Send: every data
	// message leaves from it (Env: Send lends).
	sendScratch Message
	// resend is the batch a replay sends its chunks from, reused.
	resend []Tuple

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
	// end-of-stream repair (node_end.go)
	end endRepair
	// election (node_elect.go): a probe's start, and whether a message
	// from outside the fragment arrived since
	probeAt time.Duration
	probing bool
	heard   bool
	// the sides (1 upstream, 2 downstream) a probe asked, and those that
	// answered (node_converge.go, heardSide)
	probeSides, heardSides uint8
	// takeover re-check (node_recheck.go)
	rc recheck
	// asking the primary before a takeover (node_askprimary.go)
	ap askPrimary
	// asking a connected neighbour whether it saw the primary die too
	// (node_deathword.go)
	dw deathWord
	// when every input's primary was last seen alive again (node_cutoff.go)
	inputBack   bool
	inputBackAt time.Duration
	// waiting for a live candidate before this node to take over
	// (node_candwait.go)
	cw candWait
	// probes waiting for a round trip to the far side, and when the far
	// sides were last heard (node_vouch.go)
	vouch vouching
	far   farHeard
	// rate limits of route queries and stale-route replies
	routeAsked map[int]routeAsk      // fragment -> epoch last asked for, and when
	toldStale  map[toldKey]toldRoute // (host, fragment) -> route last told, and when
	// routes that would fence this node or jump epochs, waiting for
	// their primary's confirmation (node_confirm.go), per fragment
	unconfirmed map[int]claim
	// when the detector last declared a host dead (ViewSettled)
	downAt   time.Duration
	downSeen bool
	// when the view last regained a majority (node_minority.go)
	mv minorityView
	// an empty restart waits for a settled majority view (node_cutoff.go):
	// whether and since when it waits, and whether the minority note was
	// traced
	emptyAsked   bool
	emptyAt      time.Duration
	minorityWait bool
	// route seeking (node_route.go): the retry timer is armed, its interval
	seekArmed   bool
	seekBackoff time.Duration
	// output commit (node_gate.go): on, and the last seq that may leave
	gated    bool
	gateUpTo uint64
	// noRepair: NodeConfig.NoRepair
	noRepair bool
	// planted: NodeConfig.Planted
	planted Planted

	stats NodeStats
}

// NewNode builds the node for cfg.Host, or returns an error naming the
// field of cfg it cannot use (NodeConfig.Validate).
func NewNode(cfg NodeConfig) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	frag, _ := cfg.Topology.FragOf(cfg.Host)
	n := &Node{
		host: cfg.Host, frag: frag, topo: cfg.Topology, env: cfg.Env,
		fencing: !cfg.NoFencing, traceEmits: cfg.TraceEmits, down: map[string]bool{},
		noRepair: cfg.NoRepair, planted: cfg.Planted,
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

// Send stamps m with this node's identity and epoch and sends it. Send
// lends m and its Tuples for the call only (Env): the caller may reuse
// them once it returns, and never modifies what else m refers to.
func (n *Node) Send(to string, m *Message) {
	if n.withholdsAck(to, m) {
		return
	}
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

// sendData sends the data tuples ts to host in the node's one data
// message. Send lends both (Env), so the caller may reuse ts at once.
func (n *Node) sendData(to string, ts []Tuple) {
	m := &n.sendScratch
	*m = Message{Kind: KindData, Stream: n.outPort, Tuples: ts}
	n.Send(to, m)
	m.Tuples = nil
}

// Broadcast sends m to every other host of the topology.
func (n *Node) Broadcast(m *Message) {
	for _, h := range n.topo.Hosts() {
		if h != n.host {
			n.Send(h, m)
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
