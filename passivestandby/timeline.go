package passivestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// maxTimelineHosts bounds the primaries the checkpoint timeline shows,
// one panel each (the hosts a checkpoint was restored from always among
// them).
const maxTimelineHosts = 4

// tracedCheckpoint is one checkpoint a primary sent to its backup.
type tracedCheckpoint struct {
	id       uint64
	t        time.Duration // when it was taken
	bytes    int64
	kind     string // "full" or "incremental"
	acked    bool   // the backup reported holding it
	restored *ha.Event
}

// hostCheckpoints are the checkpoints of one primary, in the order taken.
type hostCheckpoints struct {
	host, backup string
	cks          []tracedCheckpoint
}

// checkpointsOf collects from a trace the checkpoints of every primary,
// whether its backup acknowledged each, and which one a takeover restored.
func checkpointsOf(trace *ha.Trace) []*hostCheckpoints {
	var hosts []*hostCheckpoints
	byHost := map[string]*hostCheckpoints{}
	find := func(host string, id uint64) *tracedCheckpoint {
		h := byHost[host]
		if h == nil {
			return nil
		}
		for i := len(h.cks) - 1; i >= 0; i-- {
			if h.cks[i].id == id {
				return &h.cks[i]
			}
		}
		return nil
	}
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCheckpointBeg:
			h := byHost[e.Host]
			if h == nil {
				h = &hostCheckpoints{host: e.Host, backup: e.Peer}
				byHost[e.Host] = h
				hosts = append(hosts, h)
			}
			h.cks = append(h.cks, tracedCheckpoint{id: e.Seq, t: e.T, bytes: e.N, kind: e.Note})
		case ha.EvCheckpointEnd: // Host is the backup, Peer the primary
			if c := find(e.Peer, e.Seq); c != nil {
				c.acked = true
			}
		case ha.EvRestore: // Host restored Peer's checkpoint Seq
			if c := find(e.Peer, e.Seq); c != nil {
				ev := e
				c.restored = &ev
			}
		}
	}
	return hosts
}

// timeline is passive standby's checkpoint history (strategies.Info's
// Timeline): per primary, each checkpoint at the time it was taken with
// its size, those the backup never acknowledged hollow, and the one a
// takeover restored ringed and named. ok is false when the trace has no
// periodic checkpoint (a one-off state transfer to a new spare is none).
func timeline(trace *ha.Trace) (strategies.Timeline, bool) {
	hosts := checkpointsOf(trace)
	periodic := slices.ContainsFunc(hosts, func(h *hostCheckpoints) bool {
		return slices.ContainsFunc(h.cks, func(c tracedCheckpoint) bool { return c.kind == "full" || c.kind == "incremental" })
	})
	if !periodic {
		return strategies.Timeline{}, false
	}
	// The hosts restored from first, then in the order they began.
	restored := func(h *hostCheckpoints) bool {
		return slices.ContainsFunc(h.cks, func(c tracedCheckpoint) bool { return c.restored != nil })
	}
	slices.SortStableFunc(hosts, func(a, b *hostCheckpoints) int {
		switch ra, rb := restored(a), restored(b); {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	tl := strategies.Timeline{Title: "checkpoint timeline"}
	if len(hosts) > maxTimelineHosts {
		tl.Notes = append(tl.Notes, fmt.Sprintf("%d more checkpointing hosts not shown", len(hosts)-maxTimelineHosts))
		hosts = hosts[:maxTimelineHosts]
	}
	for _, h := range hosts {
		tl.Panels = append(tl.Panels, hostPanel(h))
	}
	return tl, true
}

// hostPanel is one primary's checkpoints: size against the time taken.
func hostPanel(h *hostCheckpoints) strategies.TimelinePanel {
	full := 0
	acked := strategies.TimelineSeries{Label: "acknowledged by " + h.backup, Style: strategies.TimelineStems}
	open := strategies.TimelineSeries{Label: "not acknowledged", Style: strategies.TimelineStems, Hollow: true}
	var rings []strategies.TimelineSeries
	title := ""
	for _, c := range h.cks {
		if c.kind == "full" {
			full++
		}
		pt := strategies.TimelinePoint{T: c.t, Y: float64(c.bytes)}
		if c.acked {
			acked.Points = append(acked.Points, pt)
		} else {
			open.Points = append(open.Points, pt)
		}
		if c.restored != nil {
			title += fmt.Sprintf("\n#%d (%d B, taken at %.2f s) restored by %s at %.2f s",
				c.id, c.bytes, c.t.Seconds(), c.restored.Host, c.restored.T.Seconds())
			rings = append(rings, strategies.TimelineSeries{Label: fmt.Sprintf("restored: #%d", c.id),
				Style: strategies.TimelineDots, Highlight: true, Points: []strategies.TimelinePoint{pt}})
		}
	}
	p := strategies.TimelinePanel{
		Title: fmt.Sprintf("%s → %s: %d checkpoints (%d full), %d acknowledged", h.host, h.backup,
			len(h.cks), full, len(acked.Points)) + title,
		YLabel: "checkpoint (bytes)",
	}
	for _, s := range append([]strategies.TimelineSeries{acked, open}, rings...) {
		if len(s.Points) > 0 {
			p.Series = append(p.Series, s)
		}
	}
	return p
}
