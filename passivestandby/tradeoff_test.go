package passivestandby_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
)

// TestIntervalTradeoff: over several seeds (and crash times), a longer
// checkpoint interval means more input to replay after the crash, hence a
// longer recovery, and fewer checkpoint bytes while nothing fails.
func TestIntervalTradeoff(t *testing.T) {
	t.Parallel()
	const seeds = 3
	type figures struct{ recoveryMs, catchUpMs, bytes float64 }
	measure := func(interval string) figures {
		var f figures
		for seed := uint64(1); seed <= seeds; seed++ {
			x := exp{
				seed:   seed,
				source: "{rate: 1000, keys: 64}",
				// Operators cost 300 µs per tuple so that catching up
				// with a replay takes visible time.
				cpu:      "{per_op: 300us, per_byte: 2ns, per_event: 1us}",
				strategy: "checkpoint_interval: " + interval,
				faults:   fmt.Sprintf("\n  - {at: %s, crash: B}", dur(secs(3+0.137*float64(seed)))),
			}
			sr := run(t, x)
			r := sr.Run.Recovery
			requirePrecise(t, r)
			require.NotNil(t, r.RecoveryMs)
			f.recoveryMs += *r.RecoveryMs / seeds
			tk := events(sr.Trace, ha.EvTakeover, "B.1")
			cu := events(sr.Trace, ha.EvCaughtUp, "B.1")
			require.Len(t, tk, 1)
			require.Len(t, cu, 1)
			f.catchUpMs += float64(cu[0].T-tk[0].T) / float64(time.Millisecond) / seeds
			f.bytes += float64(sr.Run.Overhead.CheckpointBytes) / seeds
		}
		return f
	}
	short, long := measure("50ms"), measure("1s")
	t.Logf("50ms: %+v; 1s: %+v", short, long)
	assert.Greater(t, long.recoveryMs, short.recoveryMs, "mean recovery time")
	assert.Greater(t, long.catchUpMs, short.catchUpMs, "mean catch-up time after the takeover")
	assert.Less(t, long.bytes, short.bytes, "mean checkpoint bytes")
}

// TestIncrementalCheckpointsAreSmaller: on a large keyed state, incremental
// checkpoints send far fewer bytes than full ones, and still recover
// precisely.
func TestIncrementalCheckpointsAreSmaller(t *testing.T) {
	t.Parallel()
	bytes := map[string]int64{}
	for _, mode := range []string{"full", "incremental"} {
		x := exp{
			source:   "{rate: 1000, keys: 5000}",
			strategy: "mode: " + mode + ", full_every: 10",
			faults:   "\n  - {at: 4.33s, crash: B}",
		}
		sr := run(t, x)
		requirePrecise(t, sr.Run.Recovery)
		for _, n := range sr.Run.Overhead.Nodes {
			if n.Host == "B" {
				bytes[mode] = n.CheckpointBytes
			}
		}
		if mode == "incremental" {
			var full, inc int
			for _, e := range events(sr.Trace, ha.EvCheckpointBeg, "B") {
				switch e.Note {
				case "full":
					full++
				case "incremental":
					inc++
				}
			}
			assert.Positive(t, full)
			assert.Greater(t, inc, 5*full, "one full checkpoint every 10")
		}
	}
	t.Logf("checkpoint bytes of B: %v", bytes)
	require.Positive(t, bytes["incremental"])
	assert.Less(t, float64(bytes["incremental"]), 0.5*float64(bytes["full"]))
}

// TestAsyncDoesNotPause: with async serialisation the primary is not
// charged for its checkpoints; with sync it is.
func TestAsyncDoesNotPause(t *testing.T) {
	t.Parallel()
	cpu := map[bool]float64{}
	for _, async := range []bool{false, true} {
		x := exp{
			source:   "{rate: 1000, keys: 5000}",
			cpu:      "{per_op: 2us, per_byte: 20ns, per_event: 1us}",
			strategy: fmt.Sprintf("async: %t", async),
			faults:   "\n  - {at: 3.4s, crash: B}",
		}
		sr := run(t, x)
		requirePrecise(t, sr.Run.Recovery)
		for _, n := range sr.Run.Overhead.Nodes {
			if n.Host == "B" {
				cpu[async] = n.CPUMs
			}
		}
	}
	t.Logf("CPU ms of B: sync %.1f, async %.1f", cpu[false], cpu[true])
	assert.Less(t, cpu[true], cpu[false])
}

// TestAutoInterval: checkpoint_interval auto picks Young's interval from the
// measured checkpoint cost and the MTBF, reports it, and recovers precisely.
func TestAutoInterval(t *testing.T) {
	t.Parallel()
	chosen := map[string]float64{}
	for _, mtbf := range []string{"10s", "10m"} {
		x := exp{source: "{rate: 1000, keys: 5000}", network: "{latency: 1ms, jitter: 100us, bandwidth: 100Mbps}",
			strategy: "checkpoint_interval: auto, mtbf: " + mtbf, faults: "\n  - {at: 3.4s, crash: B}"}
		e := x.parse(t)
		c, err := sim.Compare(e, []string{passivestandby.Name})
		require.NoError(t, err)
		run := c.Runs[0].Run
		requirePrecise(t, run.Recovery)
		require.NotNil(t, run.Extra, "the chosen interval is reported")
		iv, ok := run.Extra[passivestandby.ReportIntervalMs].(float64)
		require.True(t, ok, "extra: %v", run.Extra)
		byNode := run.Extra[passivestandby.ReportIntervalByNode].(map[string]any)
		costs := run.Extra[passivestandby.ReportCostByNode].(map[string]any)
		require.Contains(t, byNode, "B")
		m, _ := time.ParseDuration(mtbf)
		for node, v := range byNode {
			cost := costs[node].(float64)
			require.Positive(t, cost)
			want := float64(passivestandby.YoungInterval(time.Duration(cost*float64(time.Millisecond)), m)) / float64(time.Millisecond)
			assert.InDelta(t, want, v.(float64), 0.01*want+0.01, "node %s: sqrt(2 × %.3f ms × %s)", node, cost, mtbf)
			assert.LessOrEqual(t, v.(float64), iv)
		}
		chosen[mtbf] = iv
	}
	t.Logf("chosen intervals (ms): %v", chosen)
	assert.Greater(t, chosen["10m"], chosen["10s"])
}
