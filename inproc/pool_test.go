package inproc

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestPoolCopiesAreTheirOwn: a pooled copy equals the message it was made
// from and shares no memory with it (the sender reuses its batch at once),
// whatever the batch size — pooled classes, the largest, beyond them — and
// a released copy's memory may serve the next one without changing it.
func TestPoolCopiesAreTheirOwn(t *testing.T) {
	p := newMessagePool(newStack)
	for _, k := range []int{0, 1, 3, 64, 1000, 1 << maxPooledClass, 1<<maxPooledClass + 1} {
		src := &ha.Message{Kind: ha.KindData, Stream: 1, Epoch: 7, Tuples: make([]ha.Tuple, k)}
		for i := range src.Tuples {
			src.Tuples[i] = ha.Tuple{Seq: uint64(i + 1), Value: float64(i)}
		}
		c := p.copy(src)
		sameMessage(t, src, c)
		for i := range src.Tuples {
			src.Tuples[i].Seq = 0 // the sender refills its batch
		}
		for i, tu := range c.Tuples {
			require.Equal(t, uint64(i+1), tu.Seq, "k=%d: the copy changed with its source", k)
		}
		if k > 0 {
			assert.GreaterOrEqual(t, cap(c.Tuples), k)
		}
		p.release(c)
		assert.Empty(t, c.Tuples, "a released message is cleared")
		cleared := *c
		cleared.Tuples = nil
		assert.Zero(t, cleared, "a released message is cleared")
		d := p.copy(src)
		sameMessage(t, src, d)
		p.release(d)
	}
}

// sameMessage compares messages field by field, an empty batch equal to none.
func sameMessage(t *testing.T, want, got *ha.Message) {
	t.Helper()
	require.True(t, slices.Equal(want.Tuples, got.Tuples), "tuples")
	w, g := *want, *got
	w.Tuples, g.Tuples = nil, nil
	require.Equal(t, w, g)
}

// stack is a freeStore that keeps everything it is given, so the tests
// can assert reuse; sync.Pool, the runtime's store, may drop items (the
// race detector makes it drop them on purpose).
type stack []any

func newStack() freeStore { return new(stack) }

func (s *stack) Get() any {
	if len(*s) == 0 {
		return nil
	}
	x := (*s)[len(*s)-1]
	*s = (*s)[:len(*s)-1]
	return x
}

func (s *stack) Put(x any) { *s = append(*s, x) }
