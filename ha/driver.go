package ha

// Driver is the node as a driver sees it — the simulator, the in-process
// and cluster runtimes, the interaction harness: the four inputs a node
// takes (Handle dispatches them; Deliver, Fire, PeerDown and PeerUp are its
// cases), Start, and what a driver reads between two inputs. A driver never
// acts in a strategy's stead (no Send, TakeOver or Replay: Runtime is the
// strategy's surface), and a strategy never calls these entry points: it
// runs inside one already, and hands the node held-back input with
// Node.Inject. TestSurfaces checks both.
//
// Every entry point runs to completion on the node's single thread and
// sends what it produced before it returns; a driver calls them one at a
// time.
type Driver interface {
	// Host is the node's host name.
	Host() string
	// Topology is the deployment the node knows.
	Topology() *Topology
	// Start runs once, when the run begins.
	Start()
	// Handle runs the entry point that matches in.
	Handle(in Input)
	// Deliver handles one incoming message (InputMessage).
	Deliver(m *Message)
	// Fire runs the timer name (InputTimer).
	Fire(name string)
	// PeerDown tells the node the detector declared host dead (InputPeerDown).
	PeerDown(host string)
	// PeerUp tells the node host is alive again (InputPeerUp).
	PeerUp(host string)
	// Epoch is the epoch of the node's fragment's route (a runtime's
	// metrics export it on every event: Status would copy the routes).
	Epoch() uint64
	// Stats returns the node's counters so far.
	Stats() NodeStats
	// Status returns the node's role, positions and view.
	Status() Status
}

var _ Driver = (*Node)(nil)

// InputKind says what an Input carries.
type InputKind uint8

// Input kinds: the four events a driver hands a node.
const (
	InputMessage  InputKind = iota // Msg arrived
	InputTimer                     // the timer Name fired
	InputPeerDown                  // the detector declared host Name dead
	InputPeerUp                    // host Name was seen alive again
)

// Input is one event queued for a node by its driver (the simulator's
// inbox, a real runtime's event loop). Handle dispatches it, so every driver
// queues the same thing and none repeats the dispatch.
type Input struct {
	Kind InputKind
	Msg  *Message
	Name string
}

// Handle runs the node entry point that matches in.
func (n *Node) Handle(in Input) {
	switch in.Kind {
	case InputMessage:
		n.Deliver(in.Msg)
	case InputTimer:
		n.Fire(in.Name)
	case InputPeerDown:
		n.PeerDown(in.Name)
	case InputPeerUp:
		n.PeerUp(in.Name)
	}
}
