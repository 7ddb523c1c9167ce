package reports

import (
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
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

// TestCheckpointTimelineThinsALongRun: a long run's checkpoints are drawn
// every k-th, the restored one always, and the panel says so.
func TestCheckpointTimelineThinsALongRun(t *testing.T) {
	var evs []ha.Event
	n := 3 * maxPoints
	for i := range n {
		at := time.Duration(i) * 10 * time.Millisecond
		evs = append(evs,
			ha.Event{T: at, Kind: ha.EvCheckpointBeg, Host: "B", Peer: "B.1", Seq: uint64(i + 1), N: 100, Note: "full"},
			ha.Event{T: at + time.Millisecond, Kind: ha.EvCheckpointEnd, Host: "B.1", Peer: "B", Seq: uint64(i + 1)})
	}
	restored := uint64(n - 2) // not a multiple of the stride
	evs = append(evs, ha.Event{T: time.Duration(n) * 10 * time.Millisecond, Kind: ha.EvRestore, Host: "B.1", Peer: "B", Seq: restored})
	tr := ha.NewTrace(evs...)

	p, err := checkpointPanel(checkpointsOf(tr)[0], color.Black, nil, nil, false)
	require.NoError(t, err)
	assert.Contains(t, p.Title.Text, "every 3-th checkpoint drawn")
	assert.Contains(t, p.Title.Text, fmt.Sprintf("#%d", restored))
	fig, ok, err := CheckpointFigure("checkpoints", "passive-standby", tr, metrics.Recovery{})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Less(t, strings.Count(string(fig.SVG), "<path"), 3*maxPoints, "thinned")
}
