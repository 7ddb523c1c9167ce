package cluster

import (
	"container/heap"
	"sync"
	"time"
)

// timerQueue holds a node's armed timers for its loop goroutine. Arming one
// (ha.Env.SetTimer, inside a handler) only records it: no runtime timer, no
// goroutine per firing and no wake-up of the network poller are paid in the
// handler, whose time is the node's measured CPU. The loop waits for the
// earliest timer with a single reusable time.Timer and fires what is due.
type timerQueue struct {
	mu   sync.Mutex // the loop arms and fires; close stops from elsewhere
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

type timerHeap []pendingTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(pendingTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// arm records a timer named name firing at at; nothing once stopped.
func (q *timerQueue) arm(at time.Duration, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done {
		return
	}
	q.seq++
	heap.Push(&q.h, pendingTimer{at: at, seq: q.seq, name: name})
}

// mark is the arming sequence so far: due(now, mark) fires only timers
// armed before it, so a handler arming a timer for "now" (a source
// continuing a burst) lets the loop read its inbox first.
func (q *timerQueue) mark() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seq
}

// due removes and returns the name of the earliest timer due at now and
// armed up to mark, if any.
func (q *timerQueue) due(now time.Duration, mark uint64) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 || q.h[0].at > now || q.h[0].seq > mark {
		return "", false
	}
	return heap.Pop(&q.h).(pendingTimer).name, true
}

// next is how long from now until the earliest timer is due (≤ 0: due
// already); false when none is armed.
func (q *timerQueue) next(now time.Duration) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 {
		return 0, false
	}
	return q.h[0].at - now, true
}

// stop drops every armed timer and ignores later arming.
func (q *timerQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done = true
	q.h = nil
}
