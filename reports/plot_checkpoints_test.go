package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/streamha/streamha/passivestandby" // the checkpointing strategy
	"github.com/streamha/streamha/sim"
)

// TestCheckpointTimeline: passive standby's timeline has every checkpoint
// of the crashed B with its size, marks the one B.1 restored (the last B's
// backup acknowledged before the crash), and names it in the figure.
func TestCheckpointTimeline(t *testing.T) {
	e, err := sim.Parse([]byte(testExperiment), "test")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"passive-standby", "amnesia"})
	require.NoError(t, err)
	ps, am := cmp.Runs[0], cmp.Runs[1]

	hosts := checkpointsOf(ps.Trace)
	var b *hostCheckpoints
	for _, h := range hosts {
		if h.host == "B" {
			b = h
		}
	}
	require.NotNil(t, b, "B checkpoints")
	assert.Equal(t, "B.1", b.backup)
	var restored []checkpoint
	lastAcked := -1
	for i, c := range b.cks {
		assert.Positive(t, c.bytes, "checkpoint #%d has its size", c.id)
		if c.restored != nil {
			restored = append(restored, c)
		}
		if c.acked && c.t < 3.4 {
			lastAcked = i
		}
	}
	require.Len(t, restored, 1, "one takeover, one restore")
	require.GreaterOrEqual(t, lastAcked, 0)
	assert.Equal(t, b.cks[lastAcked].id, restored[0].id, "the last checkpoint acknowledged before the crash is restored")
	assert.Equal(t, "B.1", restored[0].restored.Host)

	fig, ok, err := CheckpointFigure("checkpoints", "passive-standby", ps.Trace, ps.Run.Recovery)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Contains(t, string(fig.SVG), "restored by B.1")
	assert.Contains(t, string(fig.SVG), "B → B.1")

	_, ok, err = CheckpointFigure("checkpoints", "amnesia", am.Trace, am.Run.Recovery)
	require.NoError(t, err)
	assert.False(t, ok, "amnesia takes no checkpoint")
}
