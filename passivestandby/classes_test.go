package passivestandby_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// TestQueryClasses: passive standby recovers precisely from a crash of the
// stateful middle node for repeatable, convergent-capable and
// deterministic queries, in full and incremental mode.
func TestQueryClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		class ha.Class
		nodes string
	}{
		{"repeatable (filter, map)", ha.Repeatable, `
  - {name: A, ops: [{filter: {value_gt: 0.2}}]}
  - {name: B, ops: [{map: {scale: 3, offset: 1}}, {filter: {value_lt: 2.5}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`},
		{"convergent-capable (tumbling)", ha.ConvergentCapable, `
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`},
		{"convergent-capable (sliding)", ha.ConvergentCapable, `
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{sliding: {size: 1s, slide: 250ms, agg: avg}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`},
		{"deterministic (running_sum)", ha.Deterministic, defaultNodes},
	}
	for _, tc := range cases {
		for _, mode := range []string{"full", "incremental"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				x := exp{nodes: tc.nodes, strategy: "mode: " + mode + ", full_every: 4",
					faults: "\n  - {at: 3.43s, crash: B}"}
				require.Equal(t, tc.class, x.parse(t).QueryClass())
				sr := run(t, x)
				requirePrecise(t, sr.Run.Recovery)
				assert.Len(t, events(sr.Trace, ha.EvRestore, "B.1"), 1)
			})
		}
	}
}

// unionExp is a union of two streams followed by a running sum, so the
// output depends on how the two inputs interleave, with network jitter
// (5 ms, against a tuple every 0.5 ms) so that the primary's arrival order
// often differs from event-time order, the order in which a new primary
// merges the two replays while it catches up (ha's catch-up merge).
//
// Decision logging can only restore the interleaving of tuples the failed
// primary processed. Tuples it never saw are interleaved by their arrival at
// the new primary, which differs from the failure-free run whenever both
// inputs bring the same key within one jitter window; against the single
// failure-free reference that is a (legitimate) difference. With a million
// keys such a coincidence after the takeover has a probability well below
// 1 %, so the test isolates what logging is for.
func unionExp(seed uint64, logND bool) exp {
	return exp{
		seed:   seed,
		source: "{rate: 2000, keys: 1000000, streams: 2}",
		nodes: `
  - {name: U, ops: [{union: {}}, {running_sum: {}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`,
		spares:   1,
		network:  "{latency: 1ms, jitter: 5ms, bandwidth: 1Gbps}",
		strategy: fmt.Sprintf("checkpoint_interval: 1s, log_nondeterminism: %t", logND),
		faults:   "\n  - {at: 3.9s, crash: U}",
	}
}

// TestUnionNeedsDecisionLogging: without decision logging the new primary
// re-interleaves the replayed input (in event-time order, not the failed
// primary's arrival order); its output numbering no longer lines up
// with what the failed primary delivered, so the downstream's duplicate
// elimination by seq drops the wrong outputs: some are never delivered
// (gap), others twice. With the decisions logged and followed, the recovery
// is precise.
func TestUnionNeedsDecisionLogging(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			x := unionExp(seed, false)
			require.Equal(t, ha.Arbitrary, x.parse(t).QueryClass())
			without := run(t, x).Run.Recovery
			assert.Equal(t, "gap", without.Type, "without logging: %v", without.Explanations)
			assert.Positive(t, without.Missing)
			assert.Positive(t, without.Duplicates+without.Wrong)

			sr := run(t, unionExp(seed, true))
			requirePrecise(t, sr.Run.Recovery)
			var followed int64
			for _, e := range events(sr.Trace, ha.EvNote, "U.1") {
				if e.Note == "following the interleaving decisions made after the checkpoint" {
					followed = e.N
				}
			}
			assert.Greater(t, followed, int64(100), "U.1 follows the decisions of U since the checkpoint")
		})
	}
}

// TestUnionDecisionShippingCost: logging decisions costs messages to the
// backup; shipping them periodically instead of with every output costs
// fewer, but an output leaves only once the backup holds its decisions
// (output commit), so it waits for the next shipment: more latency.
func TestUnionDecisionShippingCost(t *testing.T) {
	t.Parallel()
	run := func(strategy string) (msgs int64, p50 float64) {
		x := unionExp(1, true)
		x.strategy = strategy
		// A calm network at a low rate: the latency an output waits for its
		// decisions' acknowledgement stands out from the jitter.
		x.source, x.network = "{rate: 200, keys: 1000000, streams: 2}", "{latency: 1ms, jitter: 100us, bandwidth: 1Gbps}"
		c, err := sim.Compare(x.parse(t), []string{"passive-standby"})
		require.NoError(t, err)
		for _, nf := range c.Runs[0].Run.Overhead.Nodes {
			if nf.Host == "U" {
				return nf.Messages, c.Runs[0].Run.Overhead.LatencyP50Ms
			}
		}
		t.Fatal("no figures for U")
		return 0, 0
	}
	plain, plainLat := run("log_nondeterminism: false")
	eager, eagerLat := run("log_nondeterminism: true")
	periodic, periodicLat := run("log_nondeterminism: true, order_interval: 20ms")
	assert.Greater(t, eager, plain)
	assert.Less(t, periodic, eager)
	assert.Greater(t, eagerLat, plainLat, "an output waits for the backup's acknowledgement of its decisions")
	assert.Greater(t, periodicLat, eagerLat+5, "and, shipped periodically, for the next shipment")
}
