package globalcheckpoint

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSnapshotRoundTripsAndRejectsDamage(t *testing.T) {
	s := &snapshot{Gen: 2, ID: 51, Frag: 1, In: []uint64{18377, 4}, OutSeq: 160, Ops: [][]byte{[]byte("state"), nil}}
	b := s.encode()
	got, err := decodeSnapshot(b)
	require.NoError(t, err)
	assert.Equal(t, s.Gen, got.Gen)
	assert.Equal(t, s.In, got.In)
	assert.Equal(t, s.OutSeq, got.OutSeq)
	assert.Equal(t, []byte("state"), got.Ops[0])
	assert.Empty(t, got.Ops[1])
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"flipped byte", append([]byte{b[0] ^ 1}, b[1:]...)},
		{"truncated", b[:len(b)-5]},
	} {
		_, err := decodeSnapshot(c.b)
		assert.ErrorIs(t, err, ErrCorrupt, c.name)
	}
}

func TestBarrierRoundTrips(t *testing.T) {
	m := barrier{Gen: 3, ID: 10, Pos: 19998}
	got, err := decodeBarrier(m.encode())
	require.NoError(t, err)
	assert.Equal(t, m, got)
	b := m.encode()
	for _, bad := range [][]byte{nil, {0x80}, append(slices.Clone(b), 0), append([]byte{b[0] ^ 1}, b[1:]...)} {
		_, err = decodeBarrier(bad)
		assert.ErrorIs(t, err, ErrCorrupt, "%x", bad)
	}
}

// FuzzDecodeSnapshot feeds arbitrary bytes to the store's and a restarting
// host's decoder: it must return a snapshot or ErrCorrupt, never panic,
// and what it accepts must survive encoding and decoding again.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add((&snapshot{Gen: 1, ID: 5, Frag: 2, In: []uint64{7}, OutSeq: 9, Ops: [][]byte{{1, 2, 3}}}).encode())
	f.Add((&snapshot{}).encode())
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := decodeSnapshot(s.encode())
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}

func TestOrderRoundTripsAndRejectsDamage(t *testing.T) {
	o := &order{Term: 3, Gen: 2, ID: 40, Hosts: []string{"A.1", "B", "C"}, Vals: []uint64{19998, 0, 144}}
	b := o.encode()
	got, err := decodeOrder(b)
	require.NoError(t, err)
	assert.Equal(t, o, got)
	for _, bad := range [][]byte{nil, {0x80}, append(slices.Clone(b), 0), append([]byte{b[0] ^ 1}, b[1:]...), b[:len(b)-5]} {
		_, err = decodeOrder(bad)
		assert.ErrorIs(t, err, ErrCorrupt, "%x", bad)
	}
}

// FuzzDecodeOrder feeds arbitrary bytes to the decoder of the orders
// between the coordinator and the store: an order or ErrCorrupt, never a
// panic, and what it accepts survives encoding and decoding again.
func FuzzDecodeOrder(f *testing.F) {
	f.Add((&order{Term: 2, Gen: 1, ID: 20, Hosts: []string{"A.1", "B", "C"}, Vals: []uint64{19998}}).encode())
	f.Add((&order{}).encode())
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeOrder(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := decodeOrder(o.encode())
		require.NoError(t, err)
		require.Equal(t, o, again)
	})
}
