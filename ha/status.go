package ha

// Status is what a driver or a test reads of a node between two inputs:
// its role, epoch, positions and view. The slices are the node's own
// copies, in topology order.
type Status struct {
	Host string
	// Role is Node.Role's: source, sink, primary, secondary, standby or fenced.
	Role string
	// Frag is the node's fragment index (FragSource for a source, the
	// topology's SinkFrag for the sink).
	Frag int
	// Epoch is Node.Epoch's: the epoch of the node's fragment's route.
	Epoch uint64
	// OutputSeq is the seq of the last tuple the node emitted, Retained
	// how many of its output tuples it still keeps for a replay.
	OutputSeq uint64
	Retained  int
	// InputSeqs are the highest seqs accepted per input port.
	InputSeqs []uint64
	// Down are the hosts the detector declared dead, in topology order.
	Down []string
	// Routes are the routes the node knows, one per fragment.
	Routes []Route
}

// Status returns the node's status now.
func (n *Node) Status() Status {
	s := Status{Host: n.host, Role: n.Role(), Frag: n.frag, Epoch: n.Epoch(), OutputSeq: n.outNext, Retained: n.out.Len()}
	for p := range n.Inputs() {
		s.InputSeqs = append(s.InputSeqs, n.InputSeq(p))
	}
	for _, h := range n.topo.Hosts() {
		if n.down[h] {
			s.Down = append(s.Down, h)
		}
	}
	for f := range n.topo.Frags {
		r := n.routes[f]
		r.Receivers = append([]string(nil), r.Receivers...)
		s.Routes = append(s.Routes, r)
	}
	return s
}
