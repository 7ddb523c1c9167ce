package globalcheckpoint

import (
	"math/rand/v2"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// promise is global checkpointing's recovery promise (docs/semantics.md):
// with a transactional sink precise on every query but a union (whose
// rollback re-interleaves the input anew); with an at-least-once sink the
// outputs emitted since the restored checkpoint are repeated.
var promise = strategies.Promise{
	Precise: func(c ha.Class, p strategies.Params) (bool, string) {
		if p.String("sink") == SinkAtLeastOnce {
			return false, "at-least-once sink: repeating by design"
		}
		if c == ha.Arbitrary {
			return false, "union: a rollback re-interleaves the input, divergent by design"
		}
		return true, ""
	},
	// What it achieves on every case of the conformance matrix, per sink:
	// exact claims, so doing better than claimed fails too. Every failure
	// of a host rolls the whole job back — crash-first fails A, the
	// coordinator's host, so the store appoints a new coordinator first —
	// and the state lives in the store, so failing every host that held a
	// fragment's state (crash-primary-and-next) loses nothing. A
	// transactional sink hides every rollback (precise); an at-least-once
	// sink repeats what it delivered since the restored checkpoint, except
	// where no host fails: a short partition and a loss burst are repaired
	// from retained output (precise). The union (arbitrary) recovers as a
	// rollback of some subtype in every case, precise in none: its
	// interleaving follows arrival timing, which a rollback (and, where
	// nothing fails over, the gap repair and the snapshots' serialisation
	// pauses) shifts; whether the output converges again depends on the
	// schedule, so the claim is the level "rollback" of any subtype.
	Claims: []strategies.Claims{
		{Exact: true, Repeatable: strategies.Precise, Convergent: strategies.Precise, Deterministic: strategies.Precise,
			Arbitrary: strategies.Rollback, StateLost: strategies.Precise,
			Cases:  map[string]string{"arbitrary/crash-primary-and-next": strategies.Rollback},
			Params: map[string]any{"sink": SinkTransactional}},
		{Exact: true, Repeatable: strategies.Repeating, Convergent: strategies.Repeating, Deterministic: strategies.Repeating,
			Arbitrary: strategies.Rollback, StateLost: strategies.Repeating,
			Schedules: map[string]string{"partition-short": strategies.Precise, "loss-burst": strategies.Precise},
			Cases: map[string]string{"arbitrary/crash-primary-and-next": strategies.Rollback,
				"arbitrary/partition-short": strategies.Rollback, "arbitrary/loss-burst": strategies.Rollback},
			Params: map[string]any{"sink": SinkAtLeastOnce}},
	},
}

// soakDraw draws the parameters of a soak case: interval and sink.
func soakDraw(r *rand.Rand) map[string]any { return SoakParams(r.IntN) }

// model is global checkpointing's analytic model in the registry's terms:
// a failure restores every fragment's snapshot, read from the store and
// deserialised one after another (Σ 2 × state × per-byte), and the failed
// fragment reprocesses about half an interval of input plus what arrived
// during detection; while nothing fails every fragment's state is
// snapshotted and stored once per interval. ModelRecovery is the finer
// restart model the chain sweep plots.
func model(in strategies.ModelInput) strategies.ModelCost {
	var c strategies.ModelCost
	iv := in.Params.Duration("checkpoint_interval").Seconds()
	var state float64
	for _, f := range in.Frags {
		state += f.StateBytes
	}
	if in.Failed >= 0 {
		f := in.Frags[in.Failed]
		c.Restore = 2 * state * in.PerByte
		c.ReplayTuples = f.In * iv / 2
		c.Backlog = f.In * in.Detection
	}
	if iv > 0 {
		c.Figures = map[string]float64{strategies.ModelCheckpointBytesPerS: state / iv}
		c.CPUExtra = 2 * state / iv * in.PerByte
		c.BytesExtra = state / iv
	}
	return c
}
