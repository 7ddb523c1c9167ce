package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
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

// TestDataPlaneExperimentKeepsUp: the cluster benchmarks classify their
// real runs against the simulator's reference of this experiment, so the
// reference must deliver every window on time at the data-plane rate (the
// default CPU model of 2 µs per operator could not) and the experiment
// must survive the YAML round trip the launcher makes.
func TestDataPlaneExperimentKeepsUp(t *testing.T) {
	t.Parallel()
	e := dataPlaneExperiment("plane", planeRate, 3*time.Second)
	require.NoError(t, e.Validate())
	require.Zero(t, *e.Spares)
	require.Empty(t, e.Faults)
	b, err := yaml.Marshal(e)
	require.NoError(t, err)
	_, err = experiment.ParseWith(b, "round trip", benchLimits)
	require.NoError(t, err)

	_, ref, err := sim.Reference(e)
	require.NoError(t, err)
	o := metrics.OverheadOf(ref.Trace, nil)
	assert.Equal(t, 3*16, ref.Trace.Deliveries().Len(), "three 1 s windows of 16 keys (the end of the stream closes the last)")
	assert.Less(t, o.LatencyP99Ms, 20.0, "the reference falls behind its source")
}
