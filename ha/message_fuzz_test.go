package ha_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// TestDecodeMessageLyingLengths: string length prefixes that announce far
// more bytes than the frame holds are rejected without allocating what they
// announce. These inputs (from FuzzDecodeMessage) used to cost about 1 MiB
// each per string field, so fuzzing at 12 000 inputs/s ran the worker out
// of memory; in a cluster, any 30-byte frame could do the same.
func TestDecodeMessageLyingLengths(t *testing.T) {
	cases := map[string][]byte{
		"sender str32 of 2 GiB":      []byte("\x9b\x05\xc6\x7f\x00\x00\x00"),
		"sender str32 of 2.9 GiB":    []byte("\x9b\x02\xdb\xafG\x90\x9f\xa30000;000\xa0\xae\x9500\xa300>\x91"),
		"type bin32 of 3.3 GiB":      []byte("\x9b\xcc\x02\xa30\x1f00\a\a\a\a\xc6\xc6\xc6\xc6\xc6\xc6\xc6000C00"),
		"route primary of 64 KiB":    []byte("\x9b\x02\xa1A\x00\x00\x00\x00\x00\xa0\x90\x96\x00\x00\xda\xff\xff"),
		"sender just over the bound": append([]byte("\x9b\x02\xda\x04\x01"), make([]byte, 1025)...),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			var m ha.Message
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := msgpack.Unmarshal(b, &m)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "allocated what the prefix announced")
		})
	}
	// A name at the bound still decodes.
	long := make([]byte, ha.MaxNameLen)
	for i := range long {
		long[i] = 'h'
	}
	m := ha.Message{Kind: ha.KindStrategy, From: string(long), Type: "x"}
	b, err := msgpack.Marshal(&m)
	require.NoError(t, err)
	var got ha.Message
	require.NoError(t, msgpack.Unmarshal(b, &got))
	assert.Equal(t, m.From, got.From)
}
