package sim

import (
	"math/bits"

	"github.com/streamha/streamha/ha"
)

// maxPooledClass bounds the batches the recycler keeps: 1<<12 tuples
// (320 KiB). A larger batch (a long replay) is left to the garbage collector.
const maxPooledClass = 12

// recycler is the simulator's free list of the messages it copies in
// env.Send: a message goes back to it once the receiving node handled it
// (a node keeps neither a delivered message nor its Tuples, see ha.Env),
// or when the network dropped it. Batches are kept by
// power-of-two capacity, so a burst's large batch is not handed out for a
// single tuple while small ones are regrown. It is used by one goroutine
// and the simulation never depends on which memory it hands out, so a run
// is the same with recycling on or off.
type recycler struct {
	off     bool // nothing is taken back: every copy is fresh memory (for tests)
	reused  int  // copies made in a recycled message
	msgs    []*ha.Message
	batches [maxPooledClass + 1][][]ha.Tuple
}

// batchClass is the smallest c with 1<<c ≥ k.
func batchClass(k int) int { return bits.Len(uint(k - 1)) }

// copyMessage returns a copy of m, Tuples included, in recycled memory.
func (r *recycler) copyMessage(m *ha.Message) *ha.Message {
	var c *ha.Message
	if n := len(r.msgs); n > 0 {
		c, r.msgs = r.msgs[n-1], r.msgs[:n-1]
		r.reused++
	} else {
		c = new(ha.Message)
	}
	*c = *m
	c.Tuples = append(r.batch(len(m.Tuples)), m.Tuples...)
	return c
}

// batch returns an empty slice with room for k tuples.
func (r *recycler) batch(k int) []ha.Tuple {
	if k == 0 {
		return nil
	}
	cl := batchClass(k)
	if cl > maxPooledClass {
		return make([]ha.Tuple, 0, k)
	}
	free := r.batches[cl]
	if n := len(free); n > 0 {
		b := free[n-1]
		free[n-1] = nil
		r.batches[cl] = free[:n-1]
		return b
	}
	return make([]ha.Tuple, 0, 1<<cl)
}

// release takes back a message copyMessage made, once nothing refers to
// it or its Tuples any more.
func (r *recycler) release(m *ha.Message) {
	if r.off {
		return
	}
	if b := m.Tuples; cap(b) > 0 {
		if cl := batchClass(cap(b)); cl <= maxPooledClass && cap(b) == 1<<cl {
			clear(b)
			r.batches[cl] = append(r.batches[cl], b[:0])
		}
	}
	*m = ha.Message{}
	r.msgs = append(r.msgs, m)
}
