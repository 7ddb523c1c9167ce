package sim_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// mapQuery is a one-node pass-through query at 1000 tuples/s: every source
// tuple becomes one output, so the network model is visible per tuple.
const mapQuery = `
name: net
seed: 7
duration: 4s
drain: 1s
source: {rate: 1000, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 1}}]}
network: {latency: 1ms, bandwidth: 1Gbps}
cpu: {per_op: 1us, per_byte: 1ns, per_event: 1us}
detector: {heartbeat: 50ms, timeout: 200ms}
`

func runTrace(t *testing.T, yaml string, strategy string) *ha.Trace {
	t.Helper()
	e, err := experiment.Parse([]byte(yaml), "test")
	require.NoError(t, err)
	st, err := strategies.Build(strategy, e.ParamsFor(strategy))
	require.NoError(t, err)
	cfg, err := sim.ConfigFor(e, st, false)
	require.NoError(t, err)
	out, err := sim.Run(cfg)
	require.NoError(t, err)
	return out.Trace
}

// latencyIn returns the latencies of outputs emitted (intended) in [from, to).
func latencyIn(ds []ha.Delivery, from, to time.Duration) []time.Duration {
	var l []time.Duration
	for _, d := range ds {
		if e := time.Duration(d.Tuple.Emit); e >= from && e < to {
			l = append(l, d.Latency())
		}
	}
	return l
}

func maxDur(ls []time.Duration) time.Duration {
	var m time.Duration
	for _, l := range ls {
		m = max(m, l)
	}
	return m
}

func meanDur(ls []time.Duration) time.Duration {
	if len(ls) == 0 {
		return 0
	}
	var s time.Duration
	for _, l := range ls {
		s += l
	}
	return s / time.Duration(len(ls))
}

func TestNetworkModel(t *testing.T) {
	base := runTrace(t, mapQuery, "none").Deliveries().Slice()
	require.Equal(t, 3999, len(base), "every source tuple is delivered once without faults")
	require.Less(t, maxDur(latencyIn(base, 0, 4*time.Second)), 5*time.Millisecond)

	t.Run("delay", func(t *testing.T) {
		ds := runTrace(t, mapQuery+"faults: [{at: 1s, for: 1s, delay: {from: A, to: sink, extra: 50ms}}]\n", "none").Deliveries().Slice()
		require.Equal(t, 3999, len(ds), "delay loses nothing")
		in := latencyIn(ds, 1100*time.Millisecond, 1900*time.Millisecond)
		require.NotEmpty(t, in)
		for _, l := range in {
			require.GreaterOrEqual(t, l, 50*time.Millisecond)
		}
		assert.Less(t, maxDur(latencyIn(ds, 2500*time.Millisecond, 4*time.Second)), 5*time.Millisecond, "latency returns to normal")
	})
	t.Run("bandwidth", func(t *testing.T) {
		// 1000 tuples/s of ~100-byte messages is ~0.8 Mbit/s: at 600 kbit/s the link is saturated.
		y := `
name: bw
seed: 7
duration: 4s
drain: 10s
source: {rate: 1000, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 1}}]}
network: {latency: 1ms, bandwidth: 600kbps}
`
		ds := runTrace(t, y, "none").Deliveries().Slice()
		require.Equal(t, 3999, len(ds))
		early, late := meanDur(latencyIn(ds, 0, time.Second)), meanDur(latencyIn(ds, 3*time.Second, 4*time.Second))
		assert.Greater(t, late, 4*early, "a saturated link builds a queue: latency grows over time (early %s, late %s)", early, late)
		assert.Greater(t, late, 100*time.Millisecond)
	})
	t.Run("loss", func(t *testing.T) {
		tr := runTrace(t, mapQuery+"faults: [{at: 1s, for: 1s, loss: {from: src, to: A, p: 0.5}}]\n", "none")
		ds := tr.Deliveries().Slice()
		lost := 3999 - len(ds)
		assert.InDelta(t, 500, lost, 100, "about half of one second of input is lost")
		var gaps int64
		for _, e := range tr.Events() {
			if e.Kind == ha.EvStats && e.Host == "A" {
				gaps = e.Stats.InputGaps
			}
		}
		assert.Equal(t, int64(lost), gaps, "A counts every lost input seq")
	})
	t.Run("partition", func(t *testing.T) {
		tr := runTrace(t, mapQuery+"faults: [{at: 1s, for: 1s, partition: [[A], [sink]]}]\n", "none")
		ds := tr.Deliveries().Slice()
		for _, d := range ds {
			assert.False(t, d.T > 1010*time.Millisecond && d.T < 2*time.Second, "nothing crosses the partition (delivery at %s)", d.T)
		}
		// One second is cut, and no more: A keeps sending to the sink it
		// declared dead (a suspicion), so what it sends after the heal
		// arrives at once.
		assert.InDelta(t, 3000, len(ds), 10)
		detected := false
		for _, e := range tr.Events() {
			if e.Kind == ha.EvDetect && e.Host == "sink" && e.Peer == "A" {
				detected = true
				assert.Greater(t, e.T, 1200*time.Millisecond)
			}
		}
		assert.True(t, detected, "the detector sees the partition")
	})
}

func TestCPUQueueing(t *testing.T) {
	// 1000 tuples/s at 500 µs per tuple loads A to 50 %. A 150 ms pause
	// (shorter than the detector timeout) leaves a backlog that drains at
	// the spare capacity: latency jumps, then falls back; nothing is lost.
	y := `
name: cpu
seed: 3
duration: 3s
drain: 1s
source: {rate: 1000, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 1}}]}
network: {latency: 1ms}
cpu: {per_op: 500us, per_event: 0s, per_byte: 0s}
detector: {heartbeat: 50ms, timeout: 500ms}
faults: [{at: 1s, pause: A, for: 150ms}]
`
	ds := runTrace(t, y, "none").Deliveries().Slice()
	require.Equal(t, 2999, len(ds))
	first := latencyIn(ds, 1000*time.Millisecond, 1010*time.Millisecond)
	require.NotEmpty(t, first)
	assert.Greater(t, first[0], 140*time.Millisecond, "the first tuple waited out the pause")
	mid := meanDur(latencyIn(ds, 1100*time.Millisecond, 1150*time.Millisecond))
	assert.Less(t, mid, first[0], "the backlog drains")
	assert.Less(t, maxDur(latencyIn(ds, 1600*time.Millisecond, 3*time.Second)), 5*time.Millisecond, "caught up")
}

func TestDeterminism(t *testing.T) {
	run := func(seed int) []byte {
		e := experiment.Default()
		e.Seed = uint64(seed)
		cmp, err := sim.Compare(e, []string{"amnesia"})
		require.NoError(t, err)
		b, err := json.Marshal(cmp.Result)
		require.NoError(t, err)
		tr, err := json.Marshal(cmp.Runs[0].Trace)
		require.NoError(t, err)
		return append(b, tr...)
	}
	a, b := run(42), run(42)
	require.Equal(t, a, b, "the same seed gives a byte-identical result and trace")
	require.NotEqual(t, a, run(43), "another seed gives another result")
}

func TestDefaultExperimentAmnesiaIsGap(t *testing.T) {
	cmp, err := sim.Compare(experiment.Default(), []string{"amnesia"})
	require.NoError(t, err)
	r := cmp.Result.Runs[0].Recovery
	assert.Equal(t, "gap", r.Type)
	assert.True(t, r.Missing > 0 || r.LostInputs > 0, "amnesia loses the crashed window's state")
	assert.Positive(t, r.LostInputs)
	require.NotNil(t, r.DetectionMs)
	assert.InDelta(t, 225, *r.DetectionMs, 30, "detection = timeout + a heartbeat phase")
	require.NotNil(t, r.RecoveryMs)
	assert.GreaterOrEqual(t, *r.RecoveryMs, *r.DetectionMs)
	assert.NotEmpty(t, r.Explanations)
	assert.Equal(t, "convergent-capable", cmp.Result.QueryClass)
	assert.Equal(t, []string{"crash B at 10.4s"}, cmp.Result.Faults)
}

func TestNoHAStaysDown(t *testing.T) {
	tr := runTrace(t, mapQuery+"faults: [{at: 2s, crash: A}]\n", "none")
	ds := tr.Deliveries().Slice()
	for _, d := range ds {
		require.Less(t, d.T, 2010*time.Millisecond, "nothing after the crash without HA")
	}
	require.InDelta(t, 2000, len(ds), 5)
}

func TestFaultOnUnknownReplica(t *testing.T) {
	e, err := experiment.Parse([]byte(mapQuery+"spares: 1\nfaults: [{at: 2s, crash: A.3}]\n"), "t")
	require.NoError(t, err, "A.3 is a valid replica name")
	st, err := strategies.Build("amnesia", nil)
	require.NoError(t, err)
	_, err = sim.ConfigFor(e, st, false)
	require.ErrorIs(t, err, experiment.ErrConfig)
	require.Contains(t, err.Error(), `"A.3"`)
	require.Contains(t, err.Error(), "spares")
}

func Example() {
	cmp, _ := sim.Compare(experiment.Default(), []string{"amnesia"})
	r := cmp.Result.Runs[0].Recovery
	fmt.Println(r.Type, r.Missing, r.Wrong > 0)
	// Output: gap 0 true
}

// TestCompareWithHandsOverEachTrace: with a Faulty callback, each
// strategy's faulty trace is handed over once, in order, with its recovery
// and the reference; the comparison then keeps none, and its result is
// exactly Compare's.
func TestCompareWithHandsOverEachTrace(t *testing.T) {
	e := experiment.Default()
	names := []string{"amnesia", "none"}
	plain, err := sim.Compare(e, names)
	require.NoError(t, err)

	var got []string
	var stages []string
	cmp, err := sim.CompareWith(e, names, sim.CompareOptions{
		Progress: func(s string) { stages = append(stages, s) },
		Faulty: func(run metrics.FaultyRun) error {
			i := len(got)
			got = append(got, run.Strategy)
			require.Less(t, i, len(plain.Runs))
			assert.Equal(t, plain.Reference.Slice(), run.Reference.Slice())
			assert.Equal(t, plain.Runs[i].Trace.Slice(), run.Trace.Slice())
			assert.Equal(t, plain.Runs[i].Run.Recovery, run.Recovery)
			want := metrics.Classify(run.Reference.Deliveries(), run.Trace.Deliveries(), metrics.Marks(run.Trace))
			assert.Equal(t, want, run.Classes, "the classification the recovery came from")
			return nil
		},
	})
	require.NoError(t, err)
	assert.Equal(t, names, got)
	assert.Equal(t, plain.Result, cmp.Result)
	for _, r := range cmp.Runs {
		assert.Nil(t, r.Trace, "%s: the comparison kept a handed-over trace", r.Run.Strategy)
	}
	assert.Contains(t, stages, "amnesia: failure-free run (overhead, recovery reference)")

	// An error from the callback stops the comparison.
	_, err = sim.CompareWith(e, names, sim.CompareOptions{
		Faulty: func(run metrics.FaultyRun) error { return fmt.Errorf("disk full writing %s", run.Strategy) },
	})
	require.ErrorContains(t, err, "disk full writing amnesia")
}
