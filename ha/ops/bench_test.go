package ops

import (
	"testing"
	"time"

	"github.com/streamha/streamha/ha"
)

// benchInput is an in-order stream over 1,000 keys, 10,000 tuples per
// second of event time, so windows close regularly.
func benchInput(n int) []ha.Tuple {
	in := make([]ha.Tuple, n)
	for i := range in {
		in[i] = src(uint8(i%2), uint32(i/2*7919%1000), int64(i)*int64(100*time.Microsecond), float64(i%100), 0, int64(i))
	}
	return in
}

func benchOp(b *testing.B, op ha.Operator) {
	in := benchInput(1 << 16)
	outs := 0
	emit := func(ha.Tuple) { outs++ }
	// Warm up so map and slice capacities are in place.
	for _, t := range in {
		op.Process(t, emit)
	}
	outs = 0
	base := in[len(in)-1].Time + 1
	span := base + int64(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := in[i&(len(in)-1)]
		t.Time += span * int64(i>>16+1) // keep event time advancing across passes
		op.Process(t, emit)
	}
	b.ReportMetric(float64(outs)/float64(b.N), "out/op")
}

func BenchmarkTumbling(b *testing.B) {
	for _, agg := range []string{"sum", "max"} {
		b.Run(agg, func(b *testing.B) {
			benchOp(b, mustNew(b, "tumbling", map[string]any{"size": "1s", "agg": agg}))
		})
	}
}

func BenchmarkTumblingTracked(b *testing.B) {
	op := mustNew(b, "tumbling", map[string]any{"size": "1s"})
	if _, err := op.Snapshot(); err != nil { // turns on dirty tracking
		b.Fatal(err)
	}
	benchOp(b, op)
}

func BenchmarkSliding(b *testing.B) {
	benchOp(b, mustNew(b, "sliding", map[string]any{"size": "2s", "slide": "500ms"}))
}

func BenchmarkRunningSum(b *testing.B) {
	benchOp(b, mustNew(b, "running_sum", nil))
}

func BenchmarkHashChain(b *testing.B) {
	benchOp(b, mustNew(b, "hash_chain", nil))
}

func BenchmarkJoin(b *testing.B) {
	benchOp(b, mustNew(b, "join", map[string]any{"window": "100ms"}))
}

func BenchmarkMapFilter(b *testing.B) {
	m := mustNew(b, "map", map[string]any{"scale": 2, "offset": 1})
	f := mustNew(b, "filter", map[string]any{"value_gt": 10})
	in := benchInput(1024)
	outs := 0
	sink := func(ha.Tuple) { outs++ }
	toFilter := func(t ha.Tuple) { f.Process(t, sink) }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Process(in[i&1023], toFilter)
	}
}
