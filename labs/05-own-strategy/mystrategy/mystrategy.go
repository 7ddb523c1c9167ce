// Package mystrategy is the skeleton of lab 5: a high-availability strategy
// you complete yourself. It registers itself as "my-strategy" (hidden from
// "all" and never listed: a lab strategy); the streamha command imports
// it beside its lab command (cmd/streamha/lab_strategies.go).
//
// The goal ("restart and replay everything"): every node keeps all the
// tuples it sent; when a fragment's primary fails, the next host in line
// restarts the fragment with empty state and asks its upstream to replay
// its whole output log, so the restarted operators process every tuple
// again from the very first one. The memory this takes grows with the run.
//
// Read strategies/amnesia.go first: it is the closest example (it takes
// over through the ha.Successor capability, which the node's election
// calls; this skeleton uses the PeerDown hook instead). The check
// (streamha lab check 5) runs the conformance suite on this strategy.
package mystrategy

import (
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Name is the registered name of the strategy.
const Name = "my-strategy"

func init() {
	strategies.Register(strategies.Info{
		Name:   Name,
		Doc:    "Lab 5: restart on a spare with empty state and replay the upstream's whole output log.",
		New:    func(strategies.Params) (ha.Strategy, error) { return Strategy{}, nil },
		Hidden: true,
		Lab:    true,
	})
}

// Strategy is the lab-5 strategy: one replica per fragment plus the spares.
type Strategy struct{}

// Name implements ha.Strategy.
func (Strategy) Name() string { return Name }

// Replicas implements ha.Strategy: the primary alone; spares take over.
func (Strategy) Replicas() int { return 1 }

// InitialReceivers implements ha.Strategy: only the primary receives input.
func (Strategy) InitialReceivers(hosts []string) []string { return hosts[:1] }

// Hooks implements ha.Strategy.
func (Strategy) Hooks(n *ha.Node) ha.Hooks { return &hooks{n: n} }

type hooks struct {
	ha.NopHooks
	n *ha.Node
}

// Start runs once on every node (sources and sink included) when the run begins.
func (h *hooks) Start() {
	// TODO(lab 5, step 1): every node except the sink must keep the tuples
	// it sends, so that it can replay them later. See Node.SetRetain and
	// Node.IsSink.
}

// PeerDown runs when the failure detector declares host dead.
func (h *hooks) PeerDown(host string) {
	// TODO(lab 5, step 2): act only when the dead host is the primary of
	// this node's fragment and this node is the next in line: every node
	// hears PeerDown, so sources, the sink and the other hosts must do
	// nothing (see Node.Frag, Node.IsSink, Node.Route(frag).Primary,
	// Node.NextInLine and Node.Host). Then restart the fragment with empty
	// state (Node.Restart) and take over (Node.TakeOver), as amnesia.go's
	// TakeOver does. Think about ha.TakeoverOptions.ResetSeq: does this
	// strategy number its output afresh, or does it re-create the old
	// primary's numbering?
	_ = host
}
