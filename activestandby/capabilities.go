package activestandby

import (
	"math/rand/v2"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// promise is active standby's recovery promise (docs/semantics.md): precise
// on every deterministic query, and on a union when the primary ships its
// interleaving decisions.
var promise = strategies.Promise{
	Precise: func(c ha.Class, p strategies.Params) (bool, string) {
		if c == ha.Arbitrary && !p.Bool("ship_decisions") {
			return false, "union without ship_decisions: divergent by design"
		}
		return true, ""
	},
	// What it achieves on every case of the conformance matrix (exact
	// claims). The secondary interleaves the live input by its own arrival:
	// with network jitter that differs from the primary's (shipping
	// decisions covers only what the primary decided). When every host with
	// a fragment's state fails, a stateless query is rebuilt by the
	// upstream's replay (repeating) and a stateful one loses its state.
	Claims: []strategies.Claims{
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Precise, StateLost: strategies.Gap,
			Cases: map[string]string{"repeatable/crash-primary-and-next": strategies.Repeating,
				"arbitrary/crash-first": strategies.Convergent}},
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Precise, StateLost: strategies.Gap,
			Cases: map[string]string{"repeatable/crash-primary-and-next": strategies.Repeating,
				"arbitrary/crash-first": strategies.Convergent},
			Params: map[string]any{"ship_decisions": true}},
	},
}

// soakDraw draws the parameters of a soak case.
func soakDraw(r *rand.Rand) map[string]any {
	p := map[string]any{}
	p["ship_decisions"] = r.IntN(4) != 0
	p["ack_interval"] = strategies.Pick(r, "10ms", "20ms", "50ms")
	return p
}

// model is active standby's analytic model: the secondary processed
// everything, so a takeover replays and restores nothing; the cost is a
// second copy of every fragment's input and processing.
func model(in strategies.ModelInput) strategies.ModelCost {
	return strategies.ModelCost{CPUExtra: in.FragWork, BytesExtra: in.FragBytes}
}
