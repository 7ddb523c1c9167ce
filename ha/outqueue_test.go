package ha

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutQueueMatchesASlice drives the block queue and a plain slice with
// the same random pushes and drops, across block boundaries and through
// empty states, and compares every view a strategy reads, and its peak.
func TestOutQueueMatchesASlice(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		rng := rand.New(rand.NewPCG(seed, 9))
		var (
			q    outQueue
			ref  []Tuple
			buf  []Tuple
			next uint64
			most int
		)
		for step := 0; step < 500; step++ {
			switch r := rng.IntN(10); {
			case r < 6:
				for range rng.IntN(3 * outBlock) {
					next += 1 + uint64(rng.IntN(2))
					tp := Tuple{Seq: next, Time: int64(next) * 7}
					q.Push(&tp)
					ref = append(ref, tp)
				}
			case r < 9:
				k := 0
				if len(ref) > 0 {
					k = rng.IntN(len(ref) + 1)
				}
				if len(ref) > 8*outBlock {
					k = max(k, len(ref)/2) // keep the queue within a few blocks
				}
				q.Drop(k)
				ref = ref[k:]
			default:
				q.Reset()
				ref = nil
			}
			require.Equal(t, len(ref), q.Len(), "seed %d step %d", seed, step)
			most = max(most, len(ref))
			require.Equal(t, most, q.Max(), "seed %d step %d: the most tuples queued at once", seed, step)
			buf = q.AppendTo(buf[:0], 0, q.Len())
			require.True(t, slices.Equal(ref, buf), "seed %d step %d: queue differs from the slice", seed, step)
			if len(ref) == 0 {
				continue
			}
			i := rng.IntN(len(ref))
			require.Equal(t, ref[i], *q.At(i))
			j := i + rng.IntN(len(ref)-i+1)
			require.True(t, slices.Equal(ref[i:j], q.AppendTo(buf[:0], i, j)), "AppendTo(%d, %d)", i, j)
			for _, s := range []uint64{0, ref[i].Seq, ref[i].Seq + 1, next + 1} {
				want := slices.IndexFunc(ref, func(t Tuple) bool { return t.Seq >= s })
				if want < 0 {
					want = len(ref)
				}
				require.Equal(t, want, q.Index(s), "Index(%d)", s)
			}
		}
	}
}

func TestOutQueueIndex(t *testing.T) {
	var q outQueue
	assert.Zero(t, q.Index(5), "empty queue")
	for _, s := range []uint64{3, 4, 7} {
		q.Push(&Tuple{Seq: s})
	}
	for seq, want := range map[uint64]int{0: 0, 3: 0, 4: 1, 5: 2, 7: 2, 8: 3} {
		assert.Equal(t, want, q.Index(seq), "first position with seq ≥ %d", seq)
	}
}

// TestOutQueueReusesBlocks checks the point of the block queue: a queue
// filled and trimmed every round allocates nothing once it has reached its
// size, and gives its memory back after it stays short for many trims.
func TestOutQueueReusesBlocks(t *testing.T) {
	var q outQueue
	seq := uint64(0)
	round := func(push, keep int) {
		for range push {
			seq++
			q.Push(&Tuple{Seq: seq})
		}
		q.Drop(q.Len() - keep)
	}
	round(300*outBlock, 250*outBlock)
	allocs := testing.AllocsPerRun(20, func() { round(50*outBlock, 250*outBlock) })
	assert.Zero(t, allocs, "a steady fill-and-trim cycle must reuse the trimmed blocks")
	require.Equal(t, 250*outBlock, q.Len())
	assert.GreaterOrEqual(t, len(q.blocks)+len(q.free), 300, "the blocks for a whole round are kept")

	for range 400 {
		round(10, 10)
	}
	assert.LessOrEqual(t, len(q.blocks)+len(q.free), 64, "memory of a peak long past is given back (a short queue keeps up to 63 blocks)")
	assert.Equal(t, 10, q.Len())
	assert.Equal(t, seq-9, q.At(0).Seq)
	assert.True(t, slices.IsSortedFunc(q.AppendTo(nil, 0, q.Len()), func(a, b Tuple) int { return int(a.Seq) - int(b.Seq) }))
}
