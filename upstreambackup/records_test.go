package upstreambackup

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

const ms = int64(1_000_000)

func TestIDMemory(t *testing.T) {
	m := newIDMemory()
	a := ha.OutputID{Kind: ha.IDSource, X: 1}
	b := ha.OutputID{Kind: ha.IDSource, X: 2}
	assert.True(t, m.admit(a, 10))
	assert.True(t, m.admit(b, 20))
	assert.False(t, m.admit(a, 10))
	m.forget(15)
	assert.Equal(t, 1, m.size())
	assert.True(t, m.admit(a, 10), "a forgotten id is admitted again")
	assert.False(t, m.admit(b, 20))
	assert.Equal(t, 2, m.peak)
}

// TestIDMemoryCompaction: forgetting most ids compacts the arrival order
// in place and keeps the rest remembered.
func TestIDMemoryCompaction(t *testing.T) {
	m := newIDMemory()
	id := func(i int) ha.OutputID { return ha.OutputID{Kind: ha.IDSource, X: int64(i)} }
	for i := range 3000 {
		require.True(t, m.admit(id(i), int64(i)))
	}
	m.forget(1999)
	require.Zero(t, m.head, "compacted")
	assert.Equal(t, 1000, m.size())
	assert.Len(t, m.fifo, 1000)
	assert.False(t, m.admit(id(2500), 2500), "a later id is still remembered")
	assert.True(t, m.admit(id(1500), 1500), "a forgotten id is admitted again")
	m.forget(2600) // oldest first: stops at 2601, behind it the re-admitted 1500 stays
	assert.Equal(t, 400, m.size())
	assert.False(t, m.admit(id(1500), 1500))
}

func TestFloorCodec(t *testing.T) {
	tests := [][]floor{
		{{}, {}},
		{{t: 5 * ms, ok: true}, {}},
		{{}, {t: -3, ok: true}},
		{{t: 1 << 50, ok: true}, {t: 7, ok: true}},
	}
	for _, fs := range tests {
		got, err := decodeFloors(encodeFloors(fs...), len(fs))
		require.NoError(t, err)
		assert.Equal(t, fs, got)
	}
	_, err := decodeFloors(nil, 1)
	assert.ErrorIs(t, err, ha.ErrMalformed)
	_, err = decodeFloors([]byte{1, 0x80}, 1)
	assert.ErrorIs(t, err, ha.ErrMalformed)
	for _, a := range [][2]uint64{{42, 0}, {0, 7}, {3, 1 << 40}} {
		e, l0, err := decodeAck(encodeAck(a[0], a[1]))
		require.NoError(t, err)
		assert.Equal(t, a, [2]uint64{e, l0})
	}
	for _, bad := range [][]byte{nil, {0x80}, {1, 0x80}, {1, 2, 3}} {
		_, _, err = decodeAck(bad)
		assert.ErrorIs(t, err, ha.ErrMalformed, "% x", bad)
	}
	assert.Equal(t, floor{t: 3, ok: true}, minFloor([]floor{{t: 5, ok: true}, {t: 3, ok: true}}))
	assert.Equal(t, floor{}, minFloor([]floor{{t: 5, ok: true}, {}}))
	assert.Equal(t, floor{}, minFloor(nil))
}

// TestTimeOrder checks what trim relies on to skip its scan: whenever
// inOrderFrom(first) holds, the largest event time of the outputs up to any
// later seq is that seq's own, whatever came before first.
func TestTimeOrder(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		var (
			o     timeOrder
			times = []int64{0} // times[s] is output s's event time (seqs from 1)
		)
		for s := uint64(1); s <= 300; s++ {
			tm := times[s-1] + rng.Int64N(5)
			if rng.IntN(4) == 0 && (seed%2 == 1 || s < 150) {
				tm -= rng.Int64N(20) // out of order: anywhere, or (even seeds) early only
			}
			times = append(times, tm)
			o.note(s, tm)
		}
		inOrder := 0
		for range 500 {
			first := 1 + uint64(rng.IntN(300))
			if !o.inOrderFrom(first) {
				continue
			}
			inOrder++
			upTo := first + uint64(rng.IntN(301-int(first)))
			require.Equal(t, slices.Max(times[1:upTo+1]), times[upTo], "seed %d: outputs up to %d (in order from %d)", seed, upTo, first)
		}
		if seed%2 == 0 {
			assert.Positive(t, inOrder, "seed %d: the in-order second half is seen as such", seed)
		}
	}
	var o timeOrder
	o.note(1, 10)
	o.note(2, 5) // earlier than 1
	o.note(3, 12)
	assert.False(t, o.inOrderFrom(2), "2 came before 1 in event time")
	assert.True(t, o.inOrderFrom(3))
}

// TestIDMemoryByIDAndTime: an output is a duplicate only when its id and
// its event time were both received; a rebuilt state's output under a
// reused id at another event time is new (by id alone it was dropped).
func TestIDMemoryByIDAndTime(t *testing.T) {
	a := ha.OutputID{Kind: ha.IDKey, Key: 3, X: 7}
	tests := []struct {
		name string
		byID bool
		want []bool // admit(a, 10), admit(a, 10), admit(a, 40), admit(a, 40)
	}{
		{"id and time", false, []bool{true, false, true, false}},
		{"id alone (planted)", true, []bool{true, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newIDMemory()
			m.byID = tt.byID
			got := []bool{m.admit(a, 10), m.admit(a, 10), m.admit(a, 40), m.admit(a, 40)}
			assert.Equal(t, tt.want, got)
			m.forget(20)
			assert.Equal(t, !tt.byID, !m.admit(a, 40), "forgetting the older output keeps the newer one")
		})
	}
}
