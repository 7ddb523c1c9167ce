package ha_test

import (
	"bytes"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

func sampleTuple(i int) ha.Tuple {
	return ha.Tuple{
		Stream: 1, Seq: uint64(1000 + i), Key: uint32(i % 16), Time: int64(i) * 500_000, Emit: int64(i) * 500_000,
		Value: float64(i) * 0.25, ID: ha.OutputID{Kind: ha.IDWindow, Key: 3, X: 9_000_000_000},
		Lineage: ha.Lineage{N: 117, Hash: 0xdeadbeefcafe},
	}
}

func TestMessageRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		m    ha.Message
	}{
		{"data", ha.Message{Kind: ha.KindData, From: "A", Frag: 0, Epoch: 3, Stream: 1, Tuples: []ha.Tuple{sampleTuple(1), sampleTuple(2)}}},
		{"end of stream", ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource, Tuples: []ha.Tuple{ha.EndMark(1, 6*time.Second)}}},
		{"route", ha.Message{Kind: ha.KindRoute, From: "B.1", Frag: 1, Epoch: 2, Route: &ha.Route{Frag: 1, Epoch: 2, Primary: "B.1", Receivers: []string{"B.1", "B.2"}, ResetSeq: true, Resume: true}}},
		{"resume", ha.Message{Kind: ha.KindResume, From: "B.1", Frag: 1, Epoch: 2, Stream: 0, Seq: 4711}},
		{"ack", ha.Message{Kind: ha.KindAck, From: "C", Frag: 2, Seq: 99, Level: 1}},
		{"strategy", ha.Message{Kind: ha.KindStrategy, From: "B", Frag: 1, Type: "checkpoint", Body: []byte{1, 2, 3}}},
		{"negative frag", ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource}},
		{"body over several read chunks", ha.Message{Kind: ha.KindStrategy, From: "B", Type: "checkpoint", Body: bigBody(3<<20 + 7)}},
		{"empty body", ha.Message{Kind: ha.KindStrategy, From: "B", Type: "x", Body: []byte{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := msgpack.Marshal(&tc.m)
			require.NoError(t, err)
			var got ha.Message
			require.NoError(t, msgpack.Unmarshal(b, &got))
			if tc.m.Body == nil {
				got.Body = nil
			}
			require.Equal(t, tc.m, got)
			require.InDelta(t, len(b), tc.m.WireSize(), float64(len(b))/2+16, "WireSize approximates the encoded size")
		})
	}
}

func bigBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// TestMessageBodyLengthIsNotTrusted: a message whose body announces far
// more bytes than it carries is rejected without allocating the announced
// size (a 3 GB allocation from a 40-byte frame killed a fuzz worker).
func TestMessageBodyLengthIsNotTrusted(t *testing.T) {
	good, err := msgpack.Marshal(&ha.Message{Kind: ha.KindStrategy, From: "B", Type: "x", Body: []byte("abc")})
	require.NoError(t, err)
	i := bytes.LastIndex(good, []byte{0xc4, 3, 'a', 'b', 'c'})
	require.Positive(t, i)
	for name, prefix := range map[string][]byte{
		"bin32 of 3 GB":   {0xc6, 0xc6, 0xc6, 0xc6, 0xc6},
		"bin32 of 1.1 GB": {0xc6, 0x42, 0x00, 0x00, 0x00},
	} {
		t.Run(name, func(t *testing.T) {
			b := append(append(slices.Clone(good[:i]), prefix...), "abc"...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var m ha.Message
			require.Error(t, msgpack.Unmarshal(b, &m))
			runtime.ReadMemStats(&after)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "allocated for bytes that never came")
		})
	}
}

func TestMessageDecodeRejectsGarbage(t *testing.T) {
	good, err := msgpack.Marshal(&ha.Message{Kind: ha.KindData, From: "A", Tuples: []ha.Tuple{sampleTuple(1)}})
	require.NoError(t, err)
	cases := map[string][]byte{
		"empty":        {},
		"not an array": {0xa3, 'a', 'b', 'c'},
		"short array":  {0x93, 1, 2, 3},
		"bad kind":     append([]byte{0x9b, 0x09}, good[2:]...),
		"truncated":    good[:len(good)-5],
		"huge batch":   {0x9b, 0x01, 0xa1, 'A', 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0xdd, 0x7f, 0xff, 0xff, 0xff},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			var m ha.Message
			require.Error(t, msgpack.Unmarshal(b, &m))
		})
	}
}

func TestOutputIDStrings(t *testing.T) {
	require.Equal(t, "k03|w=9s", ha.OutputID{Kind: ha.IDWindow, Key: 3, X: 9e9}.String())
	require.Equal(t, "s0:17", ha.OutputID{Kind: ha.IDSource, Key: 0, X: 17}.String())
	require.Equal(t, "k12#4", ha.OutputID{Kind: ha.IDKey, Key: 12, X: 4}.String())
	require.Equal(t, "k01|s0:5*s1:7", ha.OutputID{Kind: ha.IDPair, Key: 1, X: 5<<32 | 7}.String())
}

func TestLineageIsOrderIndependent(t *testing.T) {
	var a, b ha.Lineage
	for i := int64(1); i <= 5; i++ {
		a.Add(ha.SourceLineage(0, i))
	}
	for i := int64(5); i >= 1; i-- {
		b.Add(ha.SourceLineage(0, i))
	}
	require.Equal(t, a, b)
	var c ha.Lineage
	for i := int64(2); i <= 6; i++ {
		c.Add(ha.SourceLineage(0, i))
	}
	require.Equal(t, a.N, c.N)
	require.NotEqual(t, a.Hash, c.Hash, "same count, other inputs: the hash tells them apart")
}

// BenchmarkCodecTuple measures encode+decode of one tuple through one
// reused Encoder and Decoder, as on a connection.
func BenchmarkCodecTuple(b *testing.B) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	dec := msgpack.NewDecoder(&buf)
	t := sampleTuple(7)
	var out ha.Tuple
	size := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := t.EncodeMsgpack(enc); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
		if err := out.DecodeMsgpack(dec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "bytes/tuple")
}

// BenchmarkCodecBatch measures a 64-tuple data message, per tuple.
func BenchmarkCodecBatch(b *testing.B) {
	m := ha.Message{Kind: ha.KindData, From: "A", Epoch: 1}
	for i := range 64 {
		m.Tuples = append(m.Tuples, sampleTuple(i))
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	dec := msgpack.NewDecoder(&buf)
	var out ha.Message
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := m.EncodeMsgpack(enc); err != nil {
			b.Fatal(err)
		}
		dec.Reset(&buf) // the cluster's frame reader reuses its decoder too
		if err := out.DecodeMsgpack(dec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/tuple")
}

// FuzzDecodeMessage feeds arbitrary bytes to the wire decoder: it must
// return a message or an error, never panic or allocate without bound, and
// a decoded message must re-encode to something that decodes equal.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range []ha.Message{
		{Kind: ha.KindData, From: "A", Tuples: []ha.Tuple{sampleTuple(1), sampleTuple(2)}},
		{Kind: ha.KindRoute, From: "B.1", Route: &ha.Route{Frag: 1, Epoch: 2, Primary: "B.1", Receivers: []string{"B.1"}}},
		{Kind: ha.KindStrategy, From: "B", Type: "checkpoint", Body: []byte("x")},
	} {
		b, err := msgpack.Marshal(&m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x9b, 0x01, 0xa1, 'A', 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0, 0xdd, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m ha.Message
		if err := msgpack.Unmarshal(b, &m); err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			return
		}
		again, err := msgpack.Marshal(&m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var m2 ha.Message
		if err := msgpack.Unmarshal(again, &m2); err != nil {
			t.Fatalf("decode of re-encoded message: %v", err)
		}
	})
}
