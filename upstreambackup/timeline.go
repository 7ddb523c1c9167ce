package upstreambackup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// maxTimelineHosts bounds the hosts the queue timeline shows, the ones
// that held the most first.
const maxTimelineHosts = 4

// hostQueue is one host's output queue as its trims and replays tell.
type hostQueue struct {
	host    string
	left    []strategies.TimelinePoint // tuples retained after each trim
	peak    float64
	replays []strategies.TimelineEvent
}

// timeline is upstream backup's queue history (strategies.Info's
// Timeline): per host, the tuples its output queue retained after each
// trim, and the replays it sent from it. ok is false when nothing was
// trimmed.
func timeline(tr *ha.Trace) (strategies.Timeline, bool) {
	var hosts []*hostQueue
	byHost := map[string]*hostQueue{}
	get := func(h string) *hostQueue {
		q := byHost[h]
		if q == nil {
			q = &hostQueue{host: h}
			byHost[h] = q
			hosts = append(hosts, q)
		}
		return q
	}
	for _, e := range tr.Events() {
		switch e.Kind {
		case ha.EvTrim: // Host trimmed up to Seq, N left
			q := get(e.Host)
			q.left = append(q.left, strategies.TimelinePoint{T: e.T, Y: float64(e.N)})
			q.peak = max(q.peak, float64(e.N))
		case ha.EvReplayStart: // Host replays N tuples to Peer
			q := get(e.Host)
			q.replays = append(q.replays, strategies.TimelineEvent{T: e.T, Label: fmt.Sprintf("replays %d to %s", e.N, e.Peer)})
		}
	}
	var empty []string
	hosts = slices.DeleteFunc(hosts, func(q *hostQueue) bool {
		if len(q.left) > 0 && q.peak == 0 && len(q.replays) == 0 {
			empty = append(empty, q.host)
		}
		return (len(q.left) == 0 || q.peak == 0) && len(q.replays) == 0
	})
	if len(hosts) == 0 {
		return strategies.Timeline{}, false
	}
	// The hosts that replayed first, then the largest queues.
	slices.SortStableFunc(hosts, func(a, b *hostQueue) int {
		if ra, rb := len(a.replays) > 0, len(b.replays) > 0; ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.peak, a.peak)
	})
	tl := strategies.Timeline{Title: "output queues"}
	if len(empty) > 0 {
		tl.Notes = append(tl.Notes, "retained nothing after any trim, not drawn: "+strings.Join(empty, ", "))
	}
	if len(hosts) > maxTimelineHosts {
		tl.Notes = append(tl.Notes, fmt.Sprintf("%d more hosts with a queue not shown", len(hosts)-maxTimelineHosts))
		hosts = hosts[:maxTimelineHosts]
	}
	for _, q := range hosts {
		tl.Panels = append(tl.Panels, strategies.TimelinePanel{
			Title:  fmt.Sprintf("%s: %d trims, at most %.0f tuples retained after a trim, %d replay%s", q.host, len(q.left), q.peak, len(q.replays), map[bool]string{true: "", false: "s"}[len(q.replays) == 1]),
			YLabel: "retained (tuples)",
			Series: []strategies.TimelineSeries{{Label: "retained after a trim", Style: strategies.TimelineSteps, Points: q.left}},
			Events: q.replays,
		})
	}
	return tl, true
}
