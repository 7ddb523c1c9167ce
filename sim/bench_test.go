package sim_test

import (
	"testing"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// tupleEvents counts tuples handled by any node (processed by a fragment
// or delivered to the sink) in a trace.
func tupleEvents(trace *ha.Trace) int64 {
	var n int64
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats {
			n += e.Stats.Tuples
		}
	}
	return n
}

// BenchmarkSimDefault simulates the default experiment (20 s at 2000
// tuples/s, crash of B) under one strategy and reports tuple-events/s.
func BenchmarkSimDefault(b *testing.B) {
	for _, name := range []string{"none", "amnesia"} {
		b.Run(name, func(b *testing.B) {
			e := experiment.Default()
			st, err := strategies.Build(name, nil)
			if err != nil {
				b.Fatal(err)
			}
			cfg, err := sim.ConfigFor(e, st, false)
			if err != nil {
				b.Fatal(err)
			}
			var events int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := sim.Run(cfg)
				if err != nil {
					b.Fatal(err)
				}
				events += tupleEvents(out.Trace)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "tuple-events/s")
		})
	}
}
