package strategies

import (
	"math/rand/v2"
)

// ModelInput is the first-principles picture of an experiment that a
// strategy's analytic model reads (reports.Model builds it; docs/reports.md
// has the formulas). Rates are per second of the run, times in seconds.
type ModelInput struct {
	// Frags are the query's fragments, upstream first.
	Frags []ModelFrag
	// Failed is the index in Frags of the first fragment that fails, or -1,
	// and FailedAt the time it fails, from the start of the run.
	Failed   int
	FailedAt float64
	// Detection is the modelled detection delay (timeout + heartbeat/2).
	Detection float64
	// PerByte and PerEvent are the CPU model's costs (s per byte, per event).
	PerByte, PerEvent float64
	// FragWork is the CPU every fragment spends on its input (s per s), and
	// FragBytes the bytes per second the fragments receive.
	FragWork, FragBytes float64
	// AckBytes approximates one acknowledgement message's size, and
	// WireTupleBytes one data tuple's (bytes).
	AckBytes, WireTupleBytes float64
	// Params are the strategy's parameters, defaults filled in.
	Params Params
}

// ModelFrag is one fragment of a ModelInput.
type ModelFrag struct {
	// In and Out are its input and output rates (tuples/s).
	In, Out float64
	// CostPerTuple is the CPU per input tuple (s).
	CostPerTuple float64
	// StateBytes is the size of its steady-state snapshot.
	StateBytes float64
	// Window is how many seconds of input its state spans (0: stateless).
	Window float64
}

// ModelCost is a strategy's share of the model: what a takeover must
// rebuild and what the strategy costs while nothing fails.
type ModelCost struct {
	// ReplayTuples and Backlog are the tuples the new primary processes to
	// catch up: replayed input and input that arrived during detection.
	ReplayTuples, Backlog float64
	// Restore is the time to restore state (s).
	Restore float64
	// CPUExtra (s of CPU per s) and BytesExtra (bytes per s) are the
	// failure-free cost over the no-HA run.
	CPUExtra, BytesExtra float64
	// Figures are further named figures of the model (Model* keys), such as
	// the checkpoint bytes per second.
	Figures map[string]float64
}

// Keys of ModelCost.Figures (and of a run's model in result.json).
const (
	ModelCheckpointBytesPerS = "checkpoint_bytes_per_s"
	ModelPeakQueue           = "peak_queue"
)

// Model is a strategy's analytic model: its cost in the experiment the
// input pictures. A strategy with no Model gets the detection delay alone.
type Model func(in ModelInput) ModelCost

// SoakDraw draws a strategy's parameters for one randomized soak case
// (streamha soak). It must draw from r only: the case is a pure function of
// (soak seed, strategy, run).
type SoakDraw func(r *rand.Rand) map[string]any

// Pick returns one of vs, drawn from r.
func Pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }
