// Package mystrategy is the teacher's reference solution of lab 5: restart
// on a spare with empty state and replay the upstream's whole output log.
package mystrategy

import (
	"math/rand/v2"

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
		// What the rest of streamha needs to know (docs/strategies.md,
		// "Adding a strategy"): the soak, the report's model and the
		// conformance suite read these from the registry.
		Promise: strategies.Promise{
			// The replay re-creates every output with its old seq and the
			// downstream drops what it has: precise, except on a union,
			// whose replayed interleaving differs and whose re-numbered
			// outputs the duplicate filter drops (a gap).
			Precise: func(c ha.Class, _ strategies.Params) (bool, string) {
				if c == ha.Arbitrary {
					return false, "union: the replay re-interleaves, the duplicate filter drops the difference"
				}
				return true, ""
			},
			Claims: []strategies.Claims{{Repeatable: strategies.Precise, Convergent: strategies.Precise,
				Deterministic: strategies.Precise, Arbitrary: strategies.Gap}},
		},
		// No parameters to draw: every soak case runs with the defaults.
		Soak:  func(*rand.Rand) map[string]any { return nil },
		Model: model,
	})
}

// model: a takeover rebuilds the state from the upstream's whole log, every
// input since the run began, plus what arrived during detection; nothing is
// paid while nothing fails but memory.
func model(in strategies.ModelInput) strategies.ModelCost {
	var c strategies.ModelCost
	if in.Failed >= 0 {
		f := in.Frags[in.Failed]
		c.ReplayTuples = f.In * in.FailedAt
		c.Backlog = f.In * in.Detection
		c.Figures = map[string]float64{strategies.ModelPeakQueue: f.In * in.FailedAt}
	}
	return c
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
