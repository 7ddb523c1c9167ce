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
			b, err := encodeCheckpoint(tc.ck, 0)
			require.NoError(t, err)
			b2, err := encodeCheckpoint(tc.ck, 0)
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

// TestCheckpointCorrupt: truncated, padded, bit-flipped or garbage bytes
// are errors matching ErrCorruptCheckpoint, never panics; damage that the
// checksum catches also matches ErrChecksum, and garbage that carries a
// valid checksum is still rejected by the parser.
func TestCheckpointCorrupt(t *testing.T) {
	good, err := encodeCheckpoint(sampleCheckpoint(), 0)
	require.NoError(t, err)
	flipped := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x10
		return b
	}
	cases := []struct {
		name     string
		b        []byte
		checksum bool // the checksum catches it
	}{
		{"empty", nil, false},
		{"shorter than the checksum", good[:3], false},
		{"truncated", good[:len(good)-3], true},
		{"trailing bytes", append(append([]byte(nil), good...), 0x01), true},
		{"first byte flipped", flipped(0), true},
		{"middle byte flipped", flipped(len(good) / 2), true},
		{"checksum flipped", flipped(len(good) - 1), true},
		{"not an array, valid checksum", appendChecksum([]byte{0xa3, 'a', 'b', 'c'}), false},
		{"wrong arity, valid checksum", appendChecksum([]byte{0x92, 0x01, 0x02}), false},
		{"too many ports, valid checksum", appendChecksum([]byte{0x98, 0x01, 0x00, 0x93, 0x01, 0x02, 0x03}), false},
		{"truncated body, valid checksum", appendChecksum(append([]byte(nil), good[:len(good)-checksumLen-2]...)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeCheckpoint(tc.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrCorruptCheckpoint)
			assert.Equal(t, tc.checksum, errors.Is(err, ErrChecksum), "%v", err)
		})
	}
}

// TestCheckpointChecksumEveryByte: flipping any single bit of an encoded
// checkpoint is detected (CRC-32C catches every 1-bit error).
func TestCheckpointChecksumEveryByte(t *testing.T) {
	good, err := encodeCheckpoint(sampleCheckpoint(), 0)
	require.NoError(t, err)
	for i := range good {
		for bit := range 8 {
			b := append([]byte(nil), good...)
			b[i] ^= 1 << bit
			_, err := decodeCheckpoint(b)
			require.ErrorIs(t, err, ErrChecksum, "byte %d bit %d", i, bit)
		}
	}
}

// FuzzDecodeCheckpoint: arbitrary bytes never panic (nor allocate what
// they merely announce), and whatever decodes re-encodes stably. Each
// input is tried as it is (almost always a checksum mismatch) and with a
// valid checksum appended, so the fuzzer reaches the parser behind it.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, _ := encodeCheckpoint(sampleCheckpoint(), 0)
	f.Add(good)
	f.Add(good[:len(good)-checksumLen])
	f.Add([]byte{0x98})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeCheckpoint(b); err != nil {
			require.ErrorIs(t, err, ErrCorruptCheckpoint)
		}
		ck, err := decodeCheckpoint(appendChecksum(append([]byte(nil), b...)))
		if err != nil {
			require.ErrorIs(t, err, ErrCorruptCheckpoint)
			return
		}
		again, err := encodeCheckpoint(ck, 0)
		require.NoError(t, err)
		ck2, err := decodeCheckpoint(again)
		require.NoError(t, err)
		again2, err := encodeCheckpoint(ck2, 0)
		require.NoError(t, err)
		require.Equal(t, again, again2) // bytes: a NaN value is not equal to itself
	})
}
