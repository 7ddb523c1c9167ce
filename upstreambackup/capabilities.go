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
	// What it achieves on every case of the conformance matrix (exact
	// claims). Without dedup the replay from the upstream's queue repeats
	// outputs; a short partition or a loss burst needs no failover and gap
	// repair from the same queue is precise. Crashing A (before the window
	// or the sum) replays duplicates into B's state: a wrong window that the
	// next one corrects (convergent), a sum that stays wrong (divergent).
	// The queue trimmed at B's window boundary makes crashing B itself
	// precise for the window, until a second crash soon after replays a
	// closed window again (repeating). A crash of both B and B.1 is the same
	// as one crash: B's state lives in A's queue. With dedup every replay is
	// filtered by seq: precise, except when C and its upstream B fail
	// together (C's backup, B's queue, is rebuilt by B's successor,
	// renumbered: repeating) and on the union, whose interleaving follows
	// timing that the strategy's own acknowledgements shift (convergent).
	Claims: []strategies.Claims{
		{Exact: true, Repeatable: strategies.Repeating, Convergent: strategies.Precise, Deterministic: strategies.Repeating,
			Arbitrary: strategies.Repeating, StateLost: strategies.Repeating,
			Schedules: map[string]string{"partition-short": strategies.Precise, "loss-burst": strategies.Precise},
			Cases: map[string]string{
				"convergent-capable/crash-first": strategies.Convergent, "convergent-capable/two-crashes": strategies.Repeating,
				"convergent-capable/crash-primary-and-next": strategies.Precise,
				"deterministic/crash-first":                 strategies.Divergent, "arbitrary/crash-first": strategies.Divergent,
			}},
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Convergent, StateLost: strategies.Precise,
			Cases: map[string]string{"deterministic/crash-adjacent": strategies.Repeating,
				"arbitrary/crash-primary-and-next": strategies.Convergent},
			Params: map[string]any{"dedup": true}},
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
