package upstreambackup_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/upstreambackup"
)

// runUB runs upstream backup (with params) on yml with the bugs p planted.
func runUB(t *testing.T, yml, params string, p ha.Planted) (metrics.Recovery, *ha.Trace) {
	t.Helper()
	e, err := experiment.Parse([]byte(yml+"strategy: {name: upstream-backup"+params+"}\n"), t.Name())
	require.NoError(t, err)
	_, ref, err := sim.Reference(e)
	require.NoError(t, err)
	out, err := sim.RunPlanted(e, upstreambackup.Name, p)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref.Trace, out.Trace)
	return rec, out.Trace
}

// TestAdjacentFailureWithStatelessDownstream: B (a sliding window) and C
// (a map) crash 10 ms apart. B.1 rebuilds B from A's queue and tells its
// downstream that the windows starting before the queue's floor are
// incomplete — but that downstream was C, dead; C.1, restarted, replayed
// B.1's whole queue and passed the rebuilt windows' partial results to the
// sink a second time (hundreds of inputs reported lost). The bound now
// precedes every replay a new primary sends: nothing is lost, and with
// dedup the recovery is precise. C holds no state, so this is no case of
// the strategy's adjacent-failure limit.
func TestAdjacentFailureWithStatelessDownstream(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"3.1s", "3.4s"} {
		for _, params := range []string{"", ", dedup: true"} {
			t.Run(at+params, func(t *testing.T) {
				t.Parallel()
				yml := strings.Replace(header, "duration: 6s", "duration: 5s", 1) + chain(sliding) +
					fmt.Sprintf("faults: [{at: %s, crash: B}, {at: %s, crash: C}]\n", at, strings.Replace(at, "s", "1s", 1))
				rec, tr := runUB(t, yml, params, ha.PlantNone)
				took := map[string]bool{}
				for _, e := range tr.Events() {
					if e.Kind == ha.EvTakeover {
						took[e.Host] = true
					}
				}
				require.True(t, took["B.1"] && took["C.1"], "both fragments were restarted: %v", took)
				assert.Zero(t, rec.Missing, rec.Explanations)
				assert.Zero(t, rec.Wrong, rec.Explanations)
				assert.Zero(t, rec.LostInputs, rec.Explanations)
				if params != "" {
					assert.Equal(t, "precise", rec.Type, rec.Explanations)
				}
				// Route convergence (the runtime's answer to a stale sender)
				// also brings C.1 the bound here: each shows only with both undone.
				bad, _ := runUB(t, yml, params, ha.PlantLostIncomplete|ha.PlantSilentFence)
				assert.Positive(t, bad.Wrong, "without the repeated bound the partial windows reach the sink")
			})
		}
	}
}
