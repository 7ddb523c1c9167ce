package inproc

import (
	"math/bits"
	"sync"

	"github.com/streamha/streamha/ha"
)

// maxPooledClass bounds the batches the pool keeps: 1<<12 tuples
// (320 KiB); a larger one (a long replay) is left to the garbage collector.
const maxPooledClass = 12

// messagePool holds the copies Send makes, shared by every host of
// every run: a sender takes a message whose batch has the next power-of-two
// capacity, the receiving host gives it back once it has handled it. A
// pooled message keeps its batch, so taking and returning one allocates
// nothing.
type messagePool struct {
	classes [maxPooledClass + 1]freeStore // *ha.Message, Tuples empty with capacity 1<<class
}

// freeStore keeps released messages of one class. sync.Pool is the store
// the runtime uses; it may drop what it holds at any time, so a test that
// asserts reuse gives the pool a store that keeps everything.
type freeStore interface {
	Get() any
	Put(any)
}

// newMessagePool returns a pool whose classes keep their messages in the
// stores newStore makes.
func newMessagePool(newStore func() freeStore) *messagePool {
	p := new(messagePool)
	for i := range p.classes {
		p.classes[i] = newStore()
	}
	return p
}

// copies is the pool of the in-process runtime's data messages.
var copies = newMessagePool(func() freeStore { return new(sync.Pool) })

// batchClass is the smallest c with 1<<c ≥ k: batches are pooled by
// power-of-two capacity, so a burst's large batch does not serve a single
// tuple while small ones are regrown.
func batchClass(k int) int { return bits.Len(uint(k - 1)) }

// copy returns a copy of m, Tuples included, in pooled memory.
func (p *messagePool) copy(m *ha.Message) *ha.Message {
	k := len(m.Tuples)
	cl := batchClass(max(k, 1))
	var c *ha.Message
	if cl <= maxPooledClass {
		if c, _ = p.classes[cl].Get().(*ha.Message); c == nil {
			c = &ha.Message{Tuples: make([]ha.Tuple, 0, 1<<cl)}
		}
	} else {
		c = &ha.Message{Tuples: make([]ha.Tuple, 0, k)} // too large to pool
	}
	buf := c.Tuples[:0]
	*c = *m
	c.Tuples = append(buf, m.Tuples...)
	return c
}

// release takes back a message copy made, once nothing refers to it or
// its Tuples any more. It is left empty, its batch kept for the next copy
// of its class; a batch beyond the largest class is left to the garbage
// collector.
func (p *messagePool) release(m *ha.Message) {
	buf := m.Tuples[:0]
	*m = ha.Message{}
	cl := batchClass(max(cap(buf), 1))
	if cl > maxPooledClass || cap(buf) != 1<<cl {
		return
	}
	m.Tuples = buf
	p.classes[cl].Put(m)
}
