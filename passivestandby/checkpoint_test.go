package passivestandby

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

func sampleCheckpoint() *checkpoint {
	return &checkpoint{
		ID: 7, Base: 6, In: []uint64{120, 98}, OutSeq: 210, Decisions: 33, LogTrim: 200,
		Ops: []opState{{Kind: stateFull}, {Kind: stateDelta, Data: []byte{1, 2, 3}}},
		Log: []ha.Tuple{
			{Seq: 201, Key: 3, Time: 5, Emit: 5, Value: 1.5, ID: ha.OutputID{Kind: ha.IDKey, Key: 3, X: 9}, Lineage: ha.Lineage{N: 9, Hash: 77}},
			{Seq: 202, Key: 4, Time: 6, Emit: 6, Value: -2, ID: ha.OutputID{Kind: ha.IDSource, Key: 1, X: 10}, Lineage: ha.Lineage{N: 1, Hash: 5}},
		},
	}
}

// TestCheckpointRoundTrip: a checkpoint decodes to what was encoded, and
// the encoding is deterministic.
func TestCheckpointRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		ck   *checkpoint
	}{
		{"incremental", sampleCheckpoint()},
		{"empty full", &checkpoint{ID: 1, In: []uint64{0}, Ops: []opState{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeCheckpoint(tc.ck)
			require.NoError(t, err)
			b2, err := encodeCheckpoint(tc.ck)
			require.NoError(t, err)
			require.Equal(t, b, b2)
			got, err := decodeCheckpoint(b)
			require.NoError(t, err)
			want := *tc.ck
			for i := range want.Ops {
				if want.Ops[i].Data == nil {
					want.Ops[i].Data = got.Ops[i].Data // nil and empty encode alike
				}
			}
			assert.Equal(t, &want, got)
			assert.Equal(t, tc.ck.Base == 0, got.Full())
		})
	}
}

// TestCheckpointCorrupt: truncated, padded or garbage bytes are errors
// matching ErrCorruptCheckpoint, never panics.
func TestCheckpointCorrupt(t *testing.T) {
	good, err := encodeCheckpoint(sampleCheckpoint())
	require.NoError(t, err)
	cases := map[string][]byte{
		"empty":          nil,
		"truncated":      good[:len(good)-3],
		"trailing bytes": append(append([]byte(nil), good...), 0x01),
		"not an array":   {0xa3, 'a', 'b', 'c'},
		"wrong arity":    {0x92, 0x01, 0x02},
		"too many ports": {0x98, 0x01, 0x00, 0x93, 0x01, 0x02, 0x03},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeCheckpoint(b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrCorruptCheckpoint), "%v", err)
		})
	}
}

// FuzzDecodeCheckpoint: arbitrary bytes never panic (nor allocate what
// they merely announce), and whatever decodes re-encodes stably.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, _ := encodeCheckpoint(sampleCheckpoint())
	f.Add(good)
	f.Add([]byte{0x98})
	f.Fuzz(func(t *testing.T, b []byte) {
		ck, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		again, err := encodeCheckpoint(ck)
		require.NoError(t, err)
		ck2, err := decodeCheckpoint(again)
		require.NoError(t, err)
		again2, err := encodeCheckpoint(ck2)
		require.NoError(t, err)
		require.Equal(t, again, again2) // bytes: a NaN value is not equal to itself
	})
}
