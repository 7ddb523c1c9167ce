package globalcheckpoint

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// TestTimelineReadsTheCheckpointHistory: checkpoint 1 completes, 2 never
// does, the rollback restores 1; the history has each at its start with
// its total size, 1's duration only, the restored one ringed and the
// rollback marked.
func TestTimelineReadsTheCheckpointHistory(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tr := ha.NewTrace(
		ha.Event{T: ms(1000), Kind: ha.EvCheckpointBeg, Host: "A", Peer: "sink", Seq: 1, N: 10},
		ha.Event{T: ms(1002), Kind: ha.EvCheckpointBeg, Host: "B", Peer: "sink", Seq: 1, N: 30},
		ha.Event{T: ms(1003), Kind: ha.EvCheckpointEnd, Host: "sink", Peer: "A", Seq: 1, N: 10, Note: "stored"},
		ha.Event{T: ms(1006), Kind: ha.EvCheckpointEnd, Host: "sink", Seq: 1, N: 40, Note: "completed on A's order"},
		ha.Event{T: ms(2000), Kind: ha.EvCheckpointBeg, Host: "A", Peer: "sink", Seq: 2, N: 12},
		ha.Event{T: ms(2100), Kind: ha.EvNote, Host: "sink", Peer: "A", Seq: 1, N: 1,
			Note: "global rollback 1 to checkpoint 1 on A, B.1, ordered by coordinator A (term 1)"},
	)
	tl, ok := timeline(tr)
	require.True(t, ok)
	require.Len(t, tl.Panels, 2)
	size, dur := tl.Panels[0], tl.Panels[1]
	series := func(p strategies.TimelinePanel, label string) strategies.TimelineSeries {
		for _, s := range p.Series {
			if s.Label == label {
				return s
			}
		}
		t.Fatalf("no series %q in %q", label, p.Title)
		return strategies.TimelineSeries{}
	}
	assert.Equal(t, []strategies.TimelinePoint{{T: ms(1000), Y: 40}}, series(size, "completed").Points)
	assert.Equal(t, []strategies.TimelinePoint{{T: ms(2000), Y: 12}}, series(size, "not completed").Points)
	assert.True(t, series(size, "not completed").Hollow)
	assert.Equal(t, []strategies.TimelinePoint{{T: ms(1000), Y: 40}}, series(size, "restored by a rollback").Points)
	assert.Equal(t, []strategies.TimelinePoint{{T: ms(1000), Y: 6}}, series(dur, "start → completed").Points, "completed 6 ms after the first snapshot")
	assert.Contains(t, dur.Title, "1 never completed")
	require.Len(t, size.Events, 1)
	assert.Equal(t, "rollback 1 to #1", size.Events[0].Label)
	assert.True(t, strings.HasPrefix(size.Title, "2 global checkpoints, 1 completed, 1 rollback"), size.Title)

	_, ok = timeline(ha.NewTrace(ha.Event{T: ms(1), Kind: ha.EvCrash, Host: "B"}))
	assert.False(t, ok, "no checkpoint, no timeline")
}
