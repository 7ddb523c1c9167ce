package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

// TestUnionPromiseCoversWhatTheFailedPrimaryProcessed: after U's crash its
// successor interleaves new input in its own order and the window behind
// the union drops one tuple of the last window as late; the run reports
// that lost input (the trigger), but the window starts long after the
// crash, so the union's precise promise holds. The same shortfall in a
// window that starts before the crash would break it.
func TestUnionPromiseCoversWhatTheFailedPrimaryProcessed(t *testing.T) {
	e, err := experiment.Load("testdata/union/late-after-takeover.yaml")
	require.NoError(t, err)
	c := &SoakCase{Strategy: "active-standby", Query: "union-window", Experiment: e}
	r := CheckSoakCase(c)
	require.True(t, r.PreciseChecked, "the case is inside the model")
	require.Positive(t, r.Recovery.LostInputs, "a window after the takeover lacks a tuple")
	assert.False(t, r.Failed(), "%v", r.Violations)
	assert.Equal(t, 3642*time.Millisecond, unionFailureAt(e))

	// The same run judged as if U had failed before that window started.
	ref, err := ReferenceTrace(e)
	require.NoError(t, err)
	out, err := RunPlanted(e, "active-standby", 0)
	require.NoError(t, err)
	late := *e
	late.Faults = append([]experiment.FaultConfig(nil), e.Faults...)
	late.Faults[0].At = experiment.Duration(7 * time.Second)
	lost, ok := unionCoveredLoss(&late, ref, out.Trace)
	require.True(t, ok)
	assert.Positive(t, lost)
	lost, _ = unionCoveredLoss(e, ref, out.Trace)
	assert.Zero(t, lost)
}
