package cluster

import (
	"time"

	"github.com/streamha/streamha/ha/timeq"
)

// timerQueue holds a node's armed timers for its loop goroutine. Arming one
// (ha.Env.SetTimer, inside a handler) only records it: no runtime timer, no
// goroutine per firing and no wake-up of the network poller are paid in the
// handler, whose time is the node's measured CPU. The loop waits for the
// earliest timer with a single reusable time.Timer and fires what is due.
// Only the goroutine that runs the node (its loop, then close) touches it.
type timerQueue struct {
	h    timeq.Queue[string] // timer names by due time (env time), then arming order
	seq  uint64
	done bool
}

// arm records a timer named name firing at at; nothing once stopped.
func (q *timerQueue) arm(at time.Duration, name string) {
	if q.done {
		return
	}
	q.seq++
	q.h.Push(timeq.Entry[string]{At: at, Seq: q.seq, V: name})
}

// mark is the arming sequence so far: due(now, mark) fires only timers
// armed before it, so a handler arming a timer for "now" (a source
// continuing a burst) lets the loop read its inbox first.
func (q *timerQueue) mark() uint64 {
	return q.seq
}

// due removes and returns the name of the earliest timer due at now and
// armed up to mark, if any.
func (q *timerQueue) due(now time.Duration, mark uint64) (string, bool) {
	if len(q.h) == 0 || q.h[0].At > now || q.h[0].Seq > mark {
		return "", false
	}
	return q.h.Pop().V, true
}

// next is how long from now until the earliest timer is due (≤ 0: due
// already); false when none is armed.
func (q *timerQueue) next(now time.Duration) (time.Duration, bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return q.h[0].At - now, true
}

// stop drops every armed timer and ignores later arming.
func (q *timerQueue) stop() {
	q.done = true
	q.h = nil
}
