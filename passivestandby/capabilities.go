package passivestandby

import (
	"math/rand/v2"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// promise is passive standby's recovery promise (docs/semantics.md):
// precise on every deterministic query, and on a union when the
// interleaving decisions are logged.
var promise = strategies.Promise{
	Precise: func(c ha.Class, p strategies.Params) (bool, string) {
		if c == ha.Arbitrary && !p.Bool("log_nondeterminism") {
			return false, "union without log_nondeterminism: divergent by design"
		}
		return true, ""
	},
	// What it achieves on every case of the conformance matrix: exact
	// claims, so doing better than claimed fails too. When every host with
	// a fragment's state fails, a stateless query is rebuilt by the
	// upstream's replay (repeating) and a stateful one loses its state. The
	// union is A's: only crashing A re-interleaves its input. With the log
	// the new primary follows the logged decisions for what A processed and
	// interleaves the rest by its own arrival (convergent); without it the
	// new primary merges the two replays by event time, another
	// interleaving: the sums differ until both orders have included the
	// same tuples again (convergent here; gap where re-interleaved outputs
	// no longer match their seqs and the downstream's dedup by seq drops
	// some, as docs/semantics.md says).
	Claims: []strategies.Claims{
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Precise, StateLost: strategies.Gap,
			Cases: map[string]string{"repeatable/crash-primary-and-next": strategies.Repeating,
				"arbitrary/crash-first": strategies.Convergent},
			Params: map[string]any{"log_nondeterminism": true}},
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Precise, StateLost: strategies.Gap,
			Cases: map[string]string{"repeatable/crash-primary-and-next": strategies.Repeating,
				"arbitrary/crash-first": strategies.Convergent}},
	},
}

// soakDraw draws the parameters of a soak case: every checkpoint mode, with
// and without logged decisions.
func soakDraw(r *rand.Rand) map[string]any {
	p := map[string]any{}
	p["checkpoint_interval"] = strategies.Pick(r, "100ms", "200ms", "300ms")
	if r.IntN(2) == 0 {
		p["mode"] = "incremental"
		p["full_every"] = 1 + r.IntN(5)
	}
	p["async"] = r.IntN(2) == 0
	p["log_nondeterminism"] = r.IntN(4) != 0
	return p
}

// model is passive standby's analytic model: a takeover restores the failed
// fragment's state and replays about half a checkpoint interval of input
// plus what arrived during detection; every checkpoint holds the state and
// the output not yet covered downstream (about one interval of output),
// serialised and restored at the per-byte CPU cost.
func model(in strategies.ModelInput) strategies.ModelCost {
	var c strategies.ModelCost
	iv := in.Params.Duration("checkpoint_interval").Seconds() // 0 for auto
	if in.Failed >= 0 {
		f := in.Frags[in.Failed]
		c.Restore = f.StateBytes * in.PerByte
		if iv > 0 {
			c.ReplayTuples = f.In * iv / 2
		}
		c.Backlog = f.In * in.Detection
	}
	if iv > 0 {
		var ckpt float64
		for _, f := range in.Frags {
			ckpt += f.StateBytes + f.Out*iv*in.WireTupleBytes
		}
		c.Figures = map[string]float64{strategies.ModelCheckpointBytesPerS: ckpt / iv}
		c.CPUExtra = 2 * ckpt / iv * in.PerByte
		c.BytesExtra = ckpt / iv
	}
	return c
}
