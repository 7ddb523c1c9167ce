package upstreambackup

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// promise is upstream backup's recovery promise (docs/semantics.md):
// precise only with dedup and unbounded retention on a deterministic query,
// and only while adjacent fragments do not both fail (the restarted
// upstream can replay only what it produced since its restart).
var promise = strategies.Promise{
	Precise: func(c ha.Class, p strategies.Params) (bool, string) {
		switch {
		case !p.Bool("dedup"):
			return false, "without dedup: repeating by design"
		case p.Int("max_tuples") > 0 || p.Duration("max_age") > 0:
			return false, "bounded retention: convergent or gap by design"
		case c == ha.Arbitrary:
			return false, "union: divergent by design"
		}
		return true, ""
	},
	NoAdjacentFailures: true,
	Claims: []strategies.Claims{
		{Repeatable: strategies.Repeating, Convergent: strategies.Convergent, Deterministic: strategies.Gap,
			Arbitrary: strategies.Gap},
		{Repeatable: strategies.Precise, Params: map[string]any{"dedup": true}},
	},
	QueueBound: func(p strategies.Params) (int64, string, bool) {
		if v := p.Int("max_tuples"); v > 0 {
			return int64(v), fmt.Sprintf("max_tuples = %d", v), true
		}
		return 0, "", false
	},
}

// soakDraw draws the parameters of a soak case: with and without dedup,
// unbounded or bounded by count or age.
func soakDraw(r *rand.Rand) map[string]any {
	p := map[string]any{}
	p["dedup"] = r.IntN(3) != 0
	p["ack_interval"] = strategies.Pick(r, "50ms", "100ms")
	switch r.IntN(4) {
	case 0:
		p["max_tuples"] = 50 + r.IntN(400)
	case 1:
		p["max_age"] = strategies.Pick(r, "300ms", "1s")
	}
	return p
}

// model is upstream backup's analytic model: a takeover rebuilds the
// failed fragment's state from about one window of replayed input plus
// what arrived during detection, which the upstream holds in its queue;
// the cost is the level-0/1 acknowledgements of every node.
func model(in strategies.ModelInput) strategies.ModelCost {
	var c strategies.ModelCost
	if in.Failed >= 0 {
		f := in.Frags[in.Failed]
		c.ReplayTuples = f.In * f.Window
		c.Backlog = f.In * in.Detection
		c.Figures = map[string]float64{strategies.ModelPeakQueue: f.In * math.Max(f.Window, in.Detection)}
	}
	if ackEvery := in.Params.Duration("ack_interval").Seconds(); ackEvery > 0 {
		acks := float64(len(in.Frags)+1) / ackEvery
		c.CPUExtra = acks * in.PerEvent
		c.BytesExtra = acks * in.AckBytes
	}
	return c
}
