package globalcheckpoint_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// TestStaleRollbackOrderIsFenced: B paused, A crashed (rollback 1 orders
// B.1 to restore B), B.1 paused before the order arrived, B back (rollback
// 2 restores B). B.1, resumed, executes rollback 1's queued order: its
// takeover takes a lower epoch than B's (a rollback's generation is its
// least epoch), so B.1 is fenced and the job stays precise. With the fix
// undone (rollback-epoch-local) both take over at epoch 1, B.1 wins the
// tie in a generation nobody else runs, and output never resumes.
func TestStaleRollbackOrderIsFenced(t *testing.T) {
	y, err := os.ReadFile("../sim/testdata/regress/global-stale-rollback-after-pause.yaml")
	require.NoError(t, err)
	e, err := experiment.Parse(y, "global-stale-rollback-after-pause.yaml")
	require.NoError(t, err)
	ref, err := sim.ReferenceTrace(e)
	require.NoError(t, err)
	takeovers := func(tr *ha.Trace) map[string]uint64 {
		epochs := map[string]uint64{}
		for ev := range tr.All() {
			if ev.Kind == ha.EvTakeover && ev.Frag == 1 {
				epochs[ev.Host] = ev.Epoch
			}
		}
		return epochs
	}

	out, err := sim.RunPlanted(e, globalcheckpoint.Name, 0)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref, out.Trace)
	assert.Equal(t, "precise", rec.Type, "%v", rec.Explanations)
	ep := takeovers(out.Trace)
	require.Contains(t, ep, "B", "rollback 2 restarts B")
	require.Contains(t, ep, "B.1", "B.1 executes rollback 1's order late")
	assert.Less(t, ep["B.1"], ep["B"], "the late takeover takes the lower epoch")
	assert.Positive(t, firstAt(out.Trace, ha.EvFenced, "B.1"), "B.1 is fenced")

	out, err = sim.RunPlanted(e, globalcheckpoint.Name, ha.PlantRollbackEpochLocal)
	require.NoError(t, err)
	rec, _ = metrics.ClassifyRecovery(ref, out.Trace)
	ep = takeovers(out.Trace)
	assert.Equal(t, ep["B"], ep["B.1"], "with the fix undone both take over at one epoch")
	assert.Positive(t, rec.Missing, "and output never resumes")
}
