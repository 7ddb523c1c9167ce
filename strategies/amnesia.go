package strategies

import (
	"math/rand/v2"

	"github.com/streamha/streamha/ha"
)

func init() {
	Register(Info{
		Name:   "none",
		Doc:    "No high availability: a failed fragment stays down. The baseline every overhead is measured against.",
		New:    func(Params) (ha.Strategy, error) { return None{}, nil },
		Hidden: true,
		Color:  5,
		// No model: without a takeover there is no recovery to model.
		Promise: Promise{QueueBound: retainsNothing("none")},
	})
	Register(Info{
		Name: "amnesia",
		Doc: "Baseline: after detection the first spare of the failed fragment starts it with empty state and " +
			"processes only new input. No runtime cost; gap recovery (everything in flight or in state is lost).",
		New: func(Params) (ha.Strategy, error) { return Amnesia{}, nil },
		Promise: Promise{
			Claims:     []Claims{{Exact: true, Repeatable: Gap, Convergent: Gap, Deterministic: Gap, Arbitrary: Gap, StateLost: Gap}},
			QueueBound: retainsNothing("amnesia"),
		},
		Soak: func(*rand.Rand) map[string]any { return nil }, // no parameters to draw
		// Restart empty, no replay: the input in flight is lost, not caught
		// up, and nothing is paid while nothing fails.
		Model: func(ModelInput) ModelCost { return ModelCost{} },
		Color: 1,
	})
}

// retainsNothing is the queue bound of a strategy that keeps no output.
func retainsNothing(name string) func(Params) (int64, string, bool) {
	return func(Params) (int64, string, bool) { return 0, name + " retains nothing", true }
}

// None is the no-HA strategy: a single replica, no retention, no takeover.
type None struct{}

// Name implements ha.Strategy.
func (None) Name() string { return "none" }

// Replicas implements ha.Strategy.
func (None) Replicas() int { return 1 }

// InitialReceivers implements ha.Strategy: the primary alone.
func (None) InitialReceivers(hosts []string) []string { return hosts[:1] }

// Hooks implements ha.Strategy.
func (None) Hooks(*ha.Node) ha.Hooks { return ha.NopHooks{} }

// Amnesia restarts a failed fragment on a spare with empty state.
type Amnesia struct{ None }

// Name implements ha.Strategy.
func (Amnesia) Name() string { return "amnesia" }

// Hooks implements ha.Strategy.
func (Amnesia) Hooks(n *ha.Node) ha.Hooks { return &amnesiaHooks{n: n} }

type amnesiaHooks struct {
	ha.NopHooks
	n *ha.Node
}

// Successors implements ha.Successor: the topology's order (nil).
func (h *amnesiaHooks) Successors() []string { return nil }

// TakeOver implements ha.Successor: this host restarts the fragment with
// empty state and processes only new input.
func (h *amnesiaHooks) TakeOver() {
	n := h.n
	if err := n.Restart(); err != nil {
		// The operators could not be rebuilt: taking over with the old
		// ones would be silent corruption, so stay down and say why.
		n.Trace(ha.Event{Kind: ha.EvNote, Note: "amnesia: no takeover: " + err.Error()})
		return
	}
	// Nothing is retained upstream, so a resume replays nothing; it only redirects.
	n.TakeOver(ha.TakeoverOptions{ResetSeq: true})
}
