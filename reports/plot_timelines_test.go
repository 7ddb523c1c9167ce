package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	_ "github.com/streamha/streamha/globalcheckpoint" // the strategies with a timeline
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	_ "github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
	_ "github.com/streamha/streamha/upstreambackup"
)

// TestStrategyTimelines: each strategy's registry entry draws its own
// history of the run: passive standby's checkpoints with the one B.1
// restored, global-checkpoint's checkpoint history with the rollback and
// the checkpoint it restored, upstream backup's queues and replay; a
// strategy without a timeline draws none.
func TestStrategyTimelines(t *testing.T) {
	e, err := experiment.Parse([]byte(testExperiment), "test")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"passive-standby", "global-checkpoint", "upstream-backup", "amnesia"})
	require.NoError(t, err)
	want := map[string][]string{
		"passive-standby":   {"checkpoint timeline", "B → B.1", "restored by B.1", "acknowledged by B.1"},
		"global-checkpoint": {"checkpoint history", "global checkpoints", "restored by rollback 1", "rollback 1 to #", "time to complete"},
		"upstream-backup":   {"output queues", "retained after a trim", "replays"},
	}
	for _, run := range cmp.Runs {
		fig, ok, err := TimelineFigure("timeline", run.Run.Strategy, run.Trace, run.Run.Recovery)
		require.NoError(t, err)
		words, has := want[run.Run.Strategy]
		require.Equal(t, has, ok, "%s has a timeline: %v", run.Run.Strategy, has)
		svg := string(fig.SVG)
		for _, w := range words {
			assert.True(t, strings.Contains(svg+fig.Title, w), "%s's timeline says %q", run.Run.Strategy, w)
		}
	}
}

// TestTimelineThinsALongRun: a long run's checkpoints are drawn every
// k-th, the restored one always, and the panel says so.
func TestTimelineThinsALongRun(t *testing.T) {
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

	fig, ok, err := TimelineFigure("timeline", "passive-standby", tr, metrics.Recovery{})
	require.NoError(t, err)
	require.True(t, ok)
	svg := string(fig.SVG)
	assert.True(t, strings.Contains(svg, "every 3-th point"), "says it is thinned")
	assert.True(t, strings.Contains(svg, "restored: #11998"), "the restored checkpoint named")
	assert.Less(t, strings.Count(svg, "<path"), 3*maxPoints, "thinned")
}
