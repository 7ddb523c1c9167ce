package globalcheckpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// globalCheckpoint is one checkpoint of the whole job, as the trace tells.
type globalCheckpoint struct {
	id        uint64
	start     time.Duration // the first fragment's snapshot
	bytes     int64         // every fragment's snapshot
	done      time.Duration // completed (every snapshot stored)
	completed bool
	restored  bool // a rollback restored it
}

// rollbackNote starts the store's note of a rollback (store.go).
const rollbackNote = "global rollback %d to checkpoint %d"

// timeline is global-checkpoint's checkpoint history (strategies.Info's
// Timeline): every checkpoint's total size at its start, completed ones
// filled and open ones hollow; how long each took to complete; the
// checkpoint each rollback restored, ringed; and the rollbacks. ok is
// false when the trace holds no checkpoint.
func timeline(tr *ha.Trace) (strategies.Timeline, bool) {
	var cks []*globalCheckpoint
	byID := map[uint64]*globalCheckpoint{}
	var rollbacks []strategies.TimelineEvent
	var restoredBy []string
	for _, e := range tr.Events() {
		switch e.Kind {
		case ha.EvCheckpointBeg: // a fragment's snapshot, Seq its id
			c := byID[e.Seq]
			if c == nil {
				c = &globalCheckpoint{id: e.Seq, start: e.T}
				byID[e.Seq] = c
				cks = append(cks, c)
			}
			c.bytes += e.N
		case ha.EvCheckpointEnd: // the store completed checkpoint Seq (no Peer)
			if c := byID[e.Seq]; c != nil && e.Peer == "" && !c.completed {
				c.done, c.completed = e.T, true
			}
		case ha.EvNote:
			if strings.HasPrefix(e.Note, fmt.Sprintf(rollbackNote, e.N, e.Seq)) {
				label := fmt.Sprintf("rollback %d to #%d", e.N, e.Seq)
				if e.Seq == 0 {
					label = fmt.Sprintf("rollback %d: no checkpoint, restart empty", e.N)
				}
				rollbacks = append(rollbacks, strategies.TimelineEvent{T: e.T, Label: label})
				if c := byID[e.Seq]; c != nil && !c.restored {
					c.restored = true
					restoredBy = append(restoredBy, fmt.Sprintf("#%d (%d B, taken at %.2f s) restored by rollback %d at %.2f s",
						c.id, c.bytes, c.start.Seconds(), e.N, e.T.Seconds()))
				}
			}
		}
	}
	if len(cks) == 0 {
		return strategies.Timeline{}, false
	}
	done := strategies.TimelineSeries{Label: "completed", Style: strategies.TimelineStems}
	open := strategies.TimelineSeries{Label: "not completed", Style: strategies.TimelineStems, Hollow: true}
	ring := strategies.TimelineSeries{Label: "restored by a rollback", Style: strategies.TimelineDots, Highlight: true}
	took := strategies.TimelineSeries{Label: "start → completed", Style: strategies.TimelineDots}
	for _, c := range cks {
		pt := strategies.TimelinePoint{T: c.start, Y: float64(c.bytes)}
		if c.completed {
			done.Points = append(done.Points, pt)
			took.Points = append(took.Points, strategies.TimelinePoint{T: c.start, Y: float64(c.done-c.start) / 1e6})
		} else {
			open.Points = append(open.Points, pt)
		}
		if c.restored {
			ring.Points = append(ring.Points, pt)
		}
	}
	size := strategies.TimelinePanel{
		Title: fmt.Sprintf("%d global checkpoints, %d completed, %d rollback%s", len(cks), len(done.Points),
			len(rollbacks), map[bool]string{true: "", false: "s"}[len(rollbacks) == 1]),
		YLabel: "checkpoint, all fragments (bytes)",
		Events: rollbacks,
	}
	for _, r := range restoredBy {
		size.Title += "\n" + r
	}
	for _, s := range []strategies.TimelineSeries{done, open, ring} {
		if len(s.Points) > 0 {
			size.Series = append(size.Series, s)
		}
	}
	dur := strategies.TimelinePanel{
		Title:  "time to complete (the first snapshot → every fragment's stored)",
		YLabel: "duration (ms)",
		Events: rollbacks,
	}
	if n := len(open.Points); n > 0 {
		dur.Title += fmt.Sprintf("; %d never completed: no duration drawn", n)
	}
	if len(took.Points) > 0 {
		dur.Series = append(dur.Series, took)
	}
	return strategies.Timeline{Title: "checkpoint history", Panels: []strategies.TimelinePanel{size, dur}}, true
}
