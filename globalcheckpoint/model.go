package globalcheckpoint

import (
	"math"
	"time"

	"github.com/streamha/streamha/ha"
)

// Promise is what the strategy promises per query class with the given
// sink (docs/semantics.md): "precise", "repeating" or "divergent".
func Promise(class ha.Class, sink string) string {
	switch {
	case class == ha.Arbitrary:
		return "divergent"
	case sink == SinkAtLeastOnce:
		return "repeating"
	}
	return "precise"
}

// ModelFrag is one fragment as the recovery model sees it.
type ModelFrag struct {
	// In is the input rate (tuples/s); Cost the CPU per input tuple (s).
	In, Cost float64
	// StateBytes is the size of its snapshot.
	StateBytes float64
}

// ModelInput is what the recovery model needs besides the fragments.
type ModelInput struct {
	Frags     []ModelFrag
	Detection time.Duration // crash → the coordinator declares it dead
	PerByte   time.Duration // CPU per byte (store read, deserialisation)
	Interval  time.Duration // checkpoint interval
	Latency   time.Duration // one network hop
}

// ModelRecovery estimates the restart time of a global rollback (crash →
// every restarted fragment caught up): detection, plus, fragment after
// fragment in chain order, the store reading its snapshot and the host
// deserialising it before it acknowledges (Σ 2 × state × per-byte), plus
// the catch-up of the slowest fragment, which reprocesses about half an
// interval of input and the input that arrived during detection at its
// spare capacity (μ − λ), plus the coordinator's order to the store and
// a round trip per fragment for the restore and its acknowledgement. The
// restores and round trips grow with the number of fragments and their
// state; passive standby's restore touches one fragment only.
func ModelRecovery(in ModelInput) time.Duration {
	det := in.Detection.Seconds()
	pb := in.PerByte.Seconds()
	var read, catchUp float64
	for _, f := range in.Frags {
		read += 2 * f.StateBytes * pb
		if f.Cost > 0 && f.In > 0 {
			mu := 1 / f.Cost
			if mu <= f.In {
				return time.Duration(math.MaxInt64)
			}
			n := f.In * (in.Interval.Seconds()/2 + det)
			catchUp = math.Max(catchUp, n/(mu-f.In))
		}
	}
	hops := float64(2*len(in.Frags)+1) * in.Latency.Seconds()
	return time.Duration((det + read + catchUp + hops) * float64(time.Second))
}

// SoakParams draws the strategy's parameters for one soak case from
// pick, which returns an index below its argument.
func SoakParams(pick func(n int) int) map[string]any {
	return map[string]any{
		"checkpoint_interval": []string{"100ms", "200ms", "500ms", "1s"}[pick(4)],
		"sink":                []string{SinkTransactional, SinkAtLeastOnce}[pick(2)],
	}
}
