package ha

import (
	"math/rand/v2"
	"time"
)

// The strategy API: Strategy and Hooks, what a strategy implements; the
// optional capabilities of Hooks (InputHook, Successor) and of operators
// that strategies use (Horizon, Incremental); and Runtime, the node as a
// strategy sees it. Drivers see the node through Driver (driver.go).

// Strategy is one HA protocol: the replica layout it needs and the hooks it
// plugs into every node. Adding a strategy never needs a change in this
// package: it implements Strategy and registers itself in package strategies.
type Strategy interface {
	// Name is the registered name ("passive-standby").
	Name() string
	// Replicas is how many hosts per protected fragment the strategy keeps
	// busy from the start: 1 for a primary alone, 2 for a primary with a
	// backup or secondary. Spares are added by the experiment.
	Replicas() int
	// InitialReceivers chooses, from a fragment's hosts (primary first),
	// those that receive its input at the start: the primary alone, or the
	// primary and its secondary for process pairs.
	InitialReceivers(hosts []string) []string
	// Hooks returns the behaviour of the node n. It is called once per node,
	// before Start.
	Hooks(n *Node) Hooks
}

// Hooks are a strategy's reactions to a node's events. Every method runs on
// the node's single thread; it acts through the node's methods and never
// blocks. Embed NopHooks to implement only what you need.
type Hooks interface {
	// Start runs once when the run begins (arm timers, set retention).
	Start()
	// Timer runs when a timer set with Node.SetTimer fires.
	Timer(name string)
	// Message sees every incoming message before the node handles it;
	// returning true means the hook consumed it and the node does nothing more.
	// m and its Tuples are only valid during the delivery (an Env may
	// recycle them, see Env): copy what is kept.
	Message(m *Message) bool
	// Output runs after the node emitted tuple t on its output stream.
	Output(t *Tuple)
	// PeerDown runs when the failure detector declares host dead.
	PeerDown(host string)
	// PeerUp runs when a host declared dead is seen alive again.
	PeerUp(host string)
	// RouteChanged runs after the node learned a new route for a fragment.
	RouteChanged(old, new Route)
}

// NopHooks implements Hooks doing nothing; embed it.
type NopHooks struct{}

func (NopHooks) Start()                  {}
func (NopHooks) Timer(string)            {}
func (NopHooks) Message(*Message) bool   { return false }
func (NopHooks) Output(*Tuple)           {}
func (NopHooks) PeerDown(string)         {}
func (NopHooks) PeerUp(string)           {}
func (NopHooks) RouteChanged(_, _ Route) {}

// InputHook is an optional capability of Hooks: it sees every input tuple
// that passed the sequence-number duplicate filter, before processing, and
// may drop it by returning false (deduplication by output id, for example).
// Each port's tuples come in seq order; the two ports of a fragment that
// is catching up come merged by event time (node_merge.go), otherwise in
// arrival order. A strategy can turn it off and on again with
// Node.SetInputHook.
type InputHook interface {
	Input(t *Tuple) bool
}

// Successor is an optional capability of Hooks: the strategy's part in
// the one election every node runs. Whenever a node learns something that
// may change who should serve its fragment — a host declared dead or seen
// alive again, a new route — it re-evaluates: when the fragment's primary
// is declared dead, the first host in takeover order that is not declared
// dead takes over, and if that is this node, the node calls TakeOver. A
// candidate that fails before it takes over is skipped as soon as it is
// declared dead, so a fragment with a live host always ends with a
// primary (docs/reliability.md), as long as that host sees a live host on
// each side of the fragment (Connected). Two hosts that both believe
// themselves elected (different views) are resolved by epochs and fencing.
type Successor interface {
	// Successors lists the hosts of the node's fragment in the order in
	// which they take over from a failed primary, as this node sees it
	// (the host with the state first). The election skips the failed
	// primary and every host declared dead. nil means Node.Ring.
	Successors() []string
	// TakeOver makes this node the fragment's primary: it restores or
	// rebuilds state as the strategy requires and calls Node.TakeOver.
	TakeOver()
}

// Horizon is implemented by stateful operators that can say which input
// still affects their state: the oldest event time (ns) any retained state
// depends on. ok is false when no state is held. Upstream backup's level-1
// acknowledgements are derived from it. Stateless operators need not
// implement it.
type Horizon interface {
	Oldest() (eventTime int64, ok bool)
}

// Incremental is implemented by operators that can checkpoint only what
// changed: SnapshotDelta returns the changes since the previous Snapshot or
// SnapshotDelta call, and ApplyDelta applies such a delta on top of restored
// state.
type Incremental interface {
	SnapshotDelta() ([]byte, error)
	ApplyDelta(delta []byte) error
}

// Runtime is the node as a strategy sees it: every method of Node a
// strategy's hooks may call, and the only ones. A strategy reads the node's
// place and view (its fragment, routes, who is declared dead), acts through
// timers, messages, its input and output and the takeover, and hands the
// node input it held back with Inject; it never calls a driver entry point
// (Driver): a hook runs inside one already. Each method is documented on
// Node; the groups below say what they are for.
//
// Strategy.Hooks receives the *Node itself, which implements Runtime:
// calls through an interface would cost the simulator on every tuple, and
// the split is kept by a test instead (TestSurfaces: a strategy package
// calls only Runtime's methods of a Node, a driver only Driver's).
type Runtime interface {
	// ---- place in the topology ----
	Host() string
	Frag() int
	Topology() *Topology
	IsSource() bool
	IsSink() bool
	Inputs() int
	Upstream(port int) string
	DownstreamFrag() int
	Downstream() []string
	Ops() []Operator
	Planted() Planted

	// ---- routes, roles and the detector's view ----
	Route(frag int) Route
	Epoch() uint64
	IsPrimary() bool
	IsReceiver() bool
	Fenced() bool
	Role() string
	Down(host string) bool
	NextInLine() string
	Ring() []string
	Connected() bool
	SeesNeighbours() bool
	CutOff() bool
	ViewSettled() bool
	SettleLeft() time.Duration
	SeesMajority() bool
	MayRestartEmpty() bool
	Stale(m *Message) bool

	// ---- the outside world, through the Env ----
	Now() time.Duration
	Rand() *rand.Rand
	SetTimer(d time.Duration, name string)
	Work(ops, bytes int)
	Trace(e Event)
	Send(to string, m *Message)
	Broadcast(m *Message)
	AddCheckpointBytes(b int)

	// ---- input ----
	InputSeq(port int) uint64
	SetInputSeq(port int, seq uint64)
	AskResend(port int, why string)
	SetInputHook(h InputHook)
	Inject(port int, ts []Tuple)
	Pending() int
	RecordOrder(on bool)
	RecordedDecisions() int
	TakeOrderLog() []uint8
	FollowOrder(decisions []uint8)

	// ---- output ----
	SetRetain(on bool)
	OutputLen() int
	OutputAt(i int) *Tuple
	OutputIndex(seq uint64) int
	AppendOutput(dst []Tuple, from, to int) []Tuple
	OutputSeq() uint64
	SetOutputSeq(s uint64)
	SetOutputLog(ts []Tuple)
	TrimOutput(upTo uint64) int
	Replay(to string, from uint64)
	GateOutput(on bool)
	ReleaseOutput(upTo uint64)

	// ---- takeover ----
	Restart() error
	TakeOver(o TakeoverOptions)
	AnnounceRoute()
	SetReceivers(recv []string)
}

var _ Runtime = (*Node)(nil)
