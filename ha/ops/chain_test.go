package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

func values(out []ha.Tuple) []float64 {
	vs := make([]float64, len(out))
	for i, o := range out {
		vs[i] = o.Value
	}
	return vs
}

// TestHashChainValues: the heads are the documented SHA-256 chain, as any
// other tool computes it (the constants come from Python's hashlib:
// h = sha256(h + struct.pack('>d', v)).digest(); int.from_bytes(h[:8]) >> 12).
func TestHashChainValues(t *testing.T) {
	in := []ha.Tuple{src(0, 3, 1, 1.5, 0, 1), src(1, 3, 2, -2, 1, 1), src(0, 3, 3, 0.25, 0, 2)}
	out := feed(mustNew(t, "hash_chain", nil), in)
	require.Len(t, out, 3)
	assert.Equal(t, []float64{4331091771147755, 1975249969147284, 2363642838310560}, values(out))
	for i, o := range out {
		assert.Equal(t, ha.OutputID{Kind: ha.IDKey, Key: 3, X: int64(i + 1)}, o.ID)
		assert.Equal(t, in[i].Time, o.Time)
		assert.Equal(t, in[i].Emit, o.Emit)
		assert.Less(t, o.Value, float64(1<<chainBits))
		assert.Equal(t, math.Trunc(o.Value), o.Value, "an exact integer")
	}
	assert.Equal(t, lin(in[0].Lineage, in[1].Lineage, in[2].Lineage), out[2].Lineage, "the lineage is every input of the key")
}

// TestHashChainKeepsTheOrder: two inputs of a key swapped change that
// step and every later one, where a running sum coincides again once both
// are in; another key's chain is untouched by how the keys interleave.
func TestHashChainKeepsTheOrder(t *testing.T) {
	a, b := src(0, 1, 1, 0.5, 0, 1), src(1, 1, 1, 0.75, 1, 1)
	other := src(0, 2, 1, 9, 0, 2)
	rest := []ha.Tuple{src(0, 1, 2, 0.125, 0, 3), src(1, 1, 2, 3, 1, 2), src(0, 1, 3, 7, 0, 4)}
	inOrder := append([]ha.Tuple{a, other, b}, rest...)
	swapped := append([]ha.Tuple{b, a, other}, rest...)

	chainA, chainB := feed(mustNew(t, "hash_chain", nil), inOrder), feed(mustNew(t, "hash_chain", nil), swapped)
	byID := func(out []ha.Tuple) map[ha.OutputID]float64 {
		m := map[ha.OutputID]float64{}
		for _, o := range out {
			m[o.ID] = o.Value
		}
		return m
	}
	ca, cb := byID(chainA), byID(chainB)
	for n := int64(1); n <= 5; n++ {
		id := ha.OutputID{Kind: ha.IDKey, Key: 1, X: n}
		assert.NotEqual(t, ca[id], cb[id], "k01#%d", n)
	}
	k2 := ha.OutputID{Kind: ha.IDKey, Key: 2, X: 1}
	assert.Equal(t, ca[k2], cb[k2], "another key's chain")

	sumA, sumB := byID(feed(mustNew(t, "running_sum", nil), inOrder)), byID(feed(mustNew(t, "running_sum", nil), swapped))
	for n := int64(2); n <= 5; n++ {
		id := ha.OutputID{Kind: ha.IDKey, Key: 1, X: n}
		assert.Equal(t, sumA[id], sumB[id], "the running sum forgets the order at k01#%d", n)
	}
}

// TestHashChainEqualValuesChainEqually: -0 and +0 are one value.
func TestHashChainEqualValuesChainEqually(t *testing.T) {
	pos := feed(mustNew(t, "hash_chain", nil), []ha.Tuple{src(0, 1, 1, 0, 0, 1)})
	neg := feed(mustNew(t, "hash_chain", nil), []ha.Tuple{src(0, 1, 1, math.Copysign(0, -1), 0, 1)})
	assert.Equal(t, pos[0].Value, neg[0].Value)
}

// TestHashChainRestoreRejectsBadRecords: a record no chain can hold (no
// value yet, a key twice) is corrupt, and the state stays as it was.
func TestHashChainRestoreRejectsBadRecords(t *testing.T) {
	record := func(e *encoder, key uint32, n int64) {
		e.uint(uint64(key))
		e.int(n)
		for range chainWords {
			e.uint(7)
		}
		e.lineage(1, 1)
	}
	zero := newEncoder(tagChainSnap)
	zero.arrayLen(1)
	record(zero, 1, 0)
	twice := newEncoder(tagChainSnap)
	twice.arrayLen(2)
	record(twice, 1, 1)
	record(twice, 1, 2)
	op := mustNew(t, "hash_chain", nil)
	feed(op, workload(3, 100, 4))
	before := stateOf(t, op)
	for what, c := range map[string]struct {
		e    *encoder
		want string
	}{"no value": {zero, "key 1 with 0 values"}, "a key twice": {twice, "duplicate key 1"}} {
		b, err := c.e.bytes()
		require.NoError(t, err)
		err = op.Restore(b)
		require.ErrorIs(t, err, ErrCorruptState, what)
		assert.ErrorContains(t, err, "hash_chain: restore: ", what)
		assert.ErrorContains(t, err, c.want, what)
		assert.Equal(t, before, stateOf(t, op), what)
	}
}

func TestHashChainNoAllocPerTuple(t *testing.T) {
	op := mustNew(t, "hash_chain", nil)
	in := workload(4, 64, 8)
	feed(op, in) // every key present: the map does not grow
	emit := func(ha.Tuple) {}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		op.Process(in[i%len(in)], emit)
		i++
	})
	assert.Zero(t, allocs)
}
