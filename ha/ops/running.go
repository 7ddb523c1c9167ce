package ops

import (
	"github.com/streamha/streamha/ha"
)

// runningSumOp emits the per-key running sum for every input.
type runningSumOp struct {
	keyed[float64]
}

// runningCodec encodes a key's sum as one float.
var runningCodec = &keyedCodec[float64]{name: "running_sum", unit: "updates", snapTag: tagRunningSnap, deltaTag: tagRunningDelta,
	minBytes: 5, encode: func(e *encoder, v float64) { e.float(v) }, decode: func(d *decoder) float64 { return d.float() }}

func newRunningSum() *runningSumOp { return &runningSumOp{keyed: newKeyed(runningCodec)} }

func (*runningSumOp) Name() string    { return "running_sum" }
func (*runningSumOp) Class() ha.Class { return ha.Deterministic }

// Process adds t to its key's sum and emits the new sum with id key#n.
func (r *runningSumOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		emit(t)
		return
	}
	c := r.cells[t.Key]
	c.n++
	c.v += t.Value
	c.lin.Add(t.Lineage)
	r.store(t.Key, c)
	emit(ha.Tuple{
		Key:     t.Key,
		Time:    t.Time,
		Emit:    t.Emit,
		Value:   c.v,
		ID:      ha.OutputID{Kind: ha.IDKey, Key: t.Key, X: c.n},
		Lineage: c.lin,
	})
}
