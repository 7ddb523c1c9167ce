package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRuntimeVsPeer runs the bench query through the in-process
// runtime and through the hand-written channel pipeline, interleaved, and
// reports both throughputs and their ratio (the figure streamha bench
// prints as "runtime cost vs batched peer").
func BenchmarkRuntimeVsPeer(b *testing.B) {
	const n = 1_000_000
	var rt, peer float64
	for b.Loop() {
		d, em, err := runInproc(n, "none")
		if err != nil {
			b.Fatal(err)
		}
		rt += float64(em) / d.Seconds()
		p, err := runPeer(n, 1000)
		if err != nil {
			b.Fatal(err)
		}
		peer += float64(n) / p.Seconds()
	}
	b.ReportMetric(rt/float64(b.N), "runtime-tuples/s")
	b.ReportMetric(peer/float64(b.N), "peer-tuples/s")
	b.ReportMetric(peer/rt, "cost-ratio")
}

func TestBenchRejectsNegativeRepeat(t *testing.T) {
	var out, errb bytes.Buffer
	code := execute([]string{"bench", "--repeat", "-1"}, &out, &errb)
	require.Equal(t, 2, code)
	require.Contains(t, errb.String(), "--repeat: must not be negative")
}
