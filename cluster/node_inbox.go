package cluster

import (
	"slices"
	"sync"

	"github.com/streamha/streamha/ha"
)

// inbox is the node loop's queue: unbounded for membership events
// (their producers must never block), bounded for data messages
// (readers wait, which pushes back on the sending peer through TCP).
type inbox struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []ha.Input
	msgs    int
	maxMsgs int
	closed  bool
	notify  chan struct{}
}

func newInbox(maxMsgs int) *inbox {
	b := &inbox{maxMsgs: maxMsgs, notify: make(chan struct{}, 1)}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *inbox) push(it ha.Input) {
	b.mu.Lock()
	if it.Kind == ha.InputMessage {
		for b.msgs >= b.maxMsgs && !b.closed {
			b.cond.Wait()
		}
	}
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.items = append(b.items, it)
	if it.Kind == ha.InputMessage {
		b.msgs++
	}
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// take returns every queued item.
func (b *inbox) take(buf []ha.Input) []ha.Input {
	b.mu.Lock()
	out := append(buf[:0], b.items...)
	clear(b.items)
	b.items = b.items[:0]
	b.msgs = 0
	b.cond.Broadcast()
	b.mu.Unlock()
	return out
}

// dropMembership discards queued PeerDown/PeerUp items, keeping the
// order of everything else.
func (b *inbox) dropMembership() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items = slices.DeleteFunc(b.items, func(it ha.Input) bool { return it.Kind == ha.InputPeerDown || it.Kind == ha.InputPeerUp })
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.items = nil
	b.cond.Broadcast()
	b.mu.Unlock()
}
