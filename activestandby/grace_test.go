package activestandby_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/activestandby"
	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// runUnionPause runs the union with ship_decisions whose primary A pauses
// for pauseFor at pauseAt (just longer than the detector's timeout: A.1
// takes over and A resumes as a zombie), with the bugs p planted.
func runUnionPause(t *testing.T, seed int, pauseAt, pauseFor string, p ha.Planted) (metrics.Recovery, *ha.Trace) {
	t.Helper()
	e, err := experiment.Parse([]byte(fmt.Sprintf(`name: union-pause
seed: %d
duration: 6s
source: {rate: 1000, keys: 4, streams: 2}
nodes:
  - {name: A, ops: [{union: {}}, {running_sum: {}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
strategy: {name: active-standby, ship_decisions: true}
network: {latency: 1ms, jitter: 2ms, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
faults:
  - {at: %s, pause: A, for: %s}
`, seed, pauseAt, pauseFor)), t.Name())
	require.NoError(t, err)
	_, ref, err := sim.Reference(e)
	require.NoError(t, err)
	out, err := sim.RunPlanted(e, activestandby.Name, p)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref.Trace, out.Trace)
	return rec, out.Trace
}

// zombieSent reports whether A, resumed after A.1 took over, sent data
// that the downstream dropped as stale: the predecessor kept deciding.
func zombieSent(tr *ha.Trace) bool {
	took := false
	for _, e := range tr.Events() {
		switch {
		case e.Kind == ha.EvTakeover && e.Host == "A.1":
			took = true
		case took && e.Kind == ha.EvFenced && e.Host == "B" && e.Peer == "A":
			return true
		}
	}
	return false
}

// TestUnionPauseKeepsThePromise: the union's primary A pauses past the
// detector's timeout; A.1 takes over while A, resumed, still sends outputs
// the downstream accepts, with the decisions they depend on on their way to
// A.1. A.1 follows those decisions for a grace period instead of
// interleaving at once in its own order: no output is missing or repeated
// and no input is lost (only values may differ, as a union allows). Without
// the grace one output went missing and another came twice.
func TestUnionPauseKeepsThePromise(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		seed              int
		pauseAt, pauseFor string
	}{{2, "3s", "230ms"}, {14, "3s", "240ms"}} {
		t.Run(fmt.Sprintf("seed %d pause at %s for %s", c.seed, c.pauseAt, c.pauseFor), func(t *testing.T) {
			t.Parallel()
			for _, p := range []ha.Planted{ha.PlantNone, ha.PlantUncommittedDecisions} {
				// Without output commit A's outputs leave at once, and
				// the grace alone keeps the promise.
				rec, tr := runUnionPause(t, c.seed, c.pauseAt, c.pauseFor, p)
				if p != ha.PlantNone {
					require.True(t, zombieSent(tr), "A resumed and sent output after A.1 took over")
				}
				assert.Zero(t, rec.Missing, rec.Explanations)
				assert.Zero(t, rec.Duplicates, rec.Explanations)
				assert.Zero(t, rec.LostInputs, rec.Explanations)
			}
			// Route convergence tells the resumed A of the takeover at once on
			// some seeds, and output commit keeps A's outputs until A.1
			// acknowledged their decisions, which only the grace does: each
			// hides the bug, and the grace shows with all three undone.
			bad, _ := runUnionPause(t, c.seed, c.pauseAt, c.pauseFor, ha.PlantZombieDecisions|ha.PlantSilentFence|ha.PlantUncommittedDecisions)
			assert.Positive(t, bad.Missing+bad.Duplicates, "without the grace an output goes missing or repeats")
		})
	}
}
