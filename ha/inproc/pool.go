package inproc

import (
	"math/bits"
	"sync"

	"github.com/streamha/streamha/ha"
)

// maxPooledClass bounds the batches the pool keeps: 1<<12 tuples
// (320 KiB); a larger one (a long replay) is left to the garbage collector.
const maxPooledClass = 12

// messagePool holds the copies SendCopy makes, shared by every host of
// every run: a sender takes a message and a batch of the next power-of-two
// capacity, the receiving host gives both back once it has handled them.
type messagePool struct {
	msgs    sync.Pool // *ha.Message
	batches [maxPooledClass + 1]sync.Pool
}

// copies is the pool of the in-process runtime's data messages.
var copies messagePool

// batchClass is the smallest c with 1<<c ≥ k: batches are pooled by
// power-of-two capacity, so a burst's large batch does not serve a single
// tuple while small ones are regrown.
func batchClass(k int) int { return bits.Len(uint(k - 1)) }

// copy returns a copy of m, Tuples included, in pooled memory.
func (p *messagePool) copy(m *ha.Message) *ha.Message {
	c, _ := p.msgs.Get().(*ha.Message)
	if c == nil {
		c = new(ha.Message)
	}
	*c = *m
	c.Tuples = append(p.batch(len(m.Tuples)), m.Tuples...)
	return c
}

// batch returns an empty batch with room for k tuples.
func (p *messagePool) batch(k int) []ha.Tuple {
	if k == 0 {
		return nil
	}
	cl := batchClass(k)
	if cl > maxPooledClass {
		return make([]ha.Tuple, 0, k)
	}
	if b, ok := p.batches[cl].Get().(*[]ha.Tuple); ok {
		return (*b)[:0]
	}
	return make([]ha.Tuple, 0, 1<<cl)
}

// release takes back a message copy made, once nothing refers to it or
// its Tuples any more.
func (p *messagePool) release(m *ha.Message) {
	if b := m.Tuples; cap(b) > 0 {
		if cl := batchClass(cap(b)); cl <= maxPooledClass && cap(b) == 1<<cl {
			b = b[:0]
			p.batches[cl].Put(&b)
		}
	}
	*m = ha.Message{}
	p.msgs.Put(m)
}
