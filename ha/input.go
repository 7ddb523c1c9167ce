package ha

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
