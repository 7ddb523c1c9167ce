package cluster

import "time"

// timerQueue holds a node's armed timers for its loop goroutine. Arming one
// (ha.Env.SetTimer, inside a handler) only records it: no runtime timer, no
// goroutine per firing and no wake-up of the network poller are paid in the
// handler, whose time is the node's measured CPU. The loop waits for the
// earliest timer with a single reusable time.Timer and fires what is due.
// Only the goroutine that runs the node (its loop, then close) touches it.
type timerQueue struct {
	h    timerHeap
	seq  uint64
	done bool
}

// pendingTimer is one armed timer: it fires at at (env time), timers due
// at the same instant in the order they were armed.
type pendingTimer struct {
	at   time.Duration
	seq  uint64
	name string
}

// before orders timers by due time, then arming order.
func (a pendingTimer) before(b pendingTimer) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// timerHeap is a binary min-heap of timers, typed so that arming one
// allocates nothing beyond the slice's growth (container/heap would box
// every timer in an interface).
type timerHeap []pendingTimer

func (h *timerHeap) push(t pendingTimer) {
	*h = append(*h, t)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *timerHeap) pop() pendingTimer {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && a[l].before(a[m]) {
			m = l
		}
		if r < n && a[r].before(a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// arm records a timer named name firing at at; nothing once stopped.
func (q *timerQueue) arm(at time.Duration, name string) {
	if q.done {
		return
	}
	q.seq++
	q.h.push(pendingTimer{at: at, seq: q.seq, name: name})
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
	if len(q.h) == 0 || q.h[0].at > now || q.h[0].seq > mark {
		return "", false
	}
	return q.h.pop().name, true
}

// next is how long from now until the earliest timer is due (≤ 0: due
// already); false when none is armed.
func (q *timerQueue) next(now time.Duration) (time.Duration, bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return q.h[0].at - now, true
}

// stop drops every armed timer and ignores later arming.
func (q *timerQueue) stop() {
	q.done = true
	q.h = nil
}
