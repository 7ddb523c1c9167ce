package timeq

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueuePopsInOrder: entries come out in (At, Seq) order, ties in push
// order, whatever order they went in, with pushes and pops interleaved.
func TestQueuePopsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q Queue[int]
	var seq uint64
	push := func() {
		seq++
		q.Push(Entry[int]{At: time.Duration(r.IntN(100)), Seq: seq, V: int(seq)}) // many ties
	}
	for range 5000 {
		push()
	}
	var last Entry[int]
	for i := 0; len(q) > 0; i++ {
		top := q[0]
		e := q.Pop()
		require.Equal(t, top, e, "pop %d returned another entry than the heap's top", i)
		require.Equal(t, uint64(e.V), e.Seq, "the value travels with its key")
		if i > 0 {
			require.True(t, last.Before(e), "pop %d: (%d, %d) after (%d, %d)", i, e.At, e.Seq, last.At, last.Seq)
		}
		last = e
		if i%3 == 0 && i < 3000 { // later pushes are never earlier than what was popped
			seq++
			q.Push(Entry[int]{At: last.At + time.Duration(r.IntN(5)), Seq: seq, V: int(seq)})
		}
	}
}
