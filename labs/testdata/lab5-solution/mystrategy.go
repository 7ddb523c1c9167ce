// Package mystrategy is the teacher's reference solution of lab 5: restart
// on a spare with empty state and replay the upstream's whole output log.
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

// Start keeps every sent tuple on every node but the sink.
func (h *hooks) Start() {
	if !h.n.IsSink() {
		h.n.SetRetain(true)
	}
}

// PeerDown restarts the fragment empty on the next host in line; TakeOver
// asks the upstream to replay from seq 0, i.e. everything. The numbering is
// re-created identically, so ResetSeq stays false and the downstream's
// duplicate filter drops what it already received.
func (h *hooks) PeerDown(host string) {
	n := h.n
	if n.Frag() < 0 || n.IsSink() || n.Route(n.Frag()).Primary != host || n.NextInLine() != n.Host() {
		return
	}
	if err := n.Restart(); err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "restart failed: " + err.Error()})
		return
	}
	n.TakeOver(ha.TakeoverOptions{})
}
