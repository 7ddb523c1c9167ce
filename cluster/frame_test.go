package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

func sampleMessages() []*ha.Message {
	return []*ha.Message{
		{Kind: ha.KindData, From: "A", Frag: 0, Epoch: 3, Stream: 0, Tuples: []ha.Tuple{
			{Seq: 1, Key: 4, Time: 10, Emit: 10, Value: 0.5, ID: ha.OutputID{Kind: ha.IDSource, Key: 0, X: 1}, Lineage: ha.SourceLineage(0, 1)},
			{Seq: 2, Key: 5, Time: 11, Emit: 11, Value: 1.5, ID: ha.OutputID{Kind: ha.IDSource, Key: 0, X: 2}, Lineage: ha.SourceLineage(0, 2)},
		}},
		{Kind: ha.KindRoute, From: "B.1", Frag: 1, Epoch: 4, Route: &ha.Route{Frag: 1, Epoch: 4, Primary: "B.1", Receivers: []string{"B.1", "B.2"}, ResetSeq: true}},
		{Kind: ha.KindStrategy, From: "B", Frag: 1, Type: "checkpoint", Body: []byte("state")},
	}
}

func keysFor(s string) Keys { return DeriveKeys([]byte(s)) }

func encodeFrames(t *testing.T, k Keys, nonce []byte, hello bool, msgs []*ha.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw := newFrameWriter(&buf, sessionMAC(k, nonce))
	if hello {
		require.NoError(t, fw.writeHello("A", "B"))
	}
	for _, m := range msgs {
		require.NoError(t, fw.WriteMessage(m))
	}
	require.NoError(t, fw.Flush())
	return buf.Bytes()
}

func TestFrameRoundTrip(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, nonceLen)
	for _, tc := range []struct {
		name string
		keys Keys
	}{
		{"no secret", Keys{}},
		{"secret", keysFor("correct horse battery staple")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeFrames(t, tc.keys, nonce, true, sampleMessages())
			fr := newFrameReader(bytes.NewReader(b), sessionMAC(tc.keys, nonce), MaxFrame)
			from, err := fr.readHello("B")
			require.NoError(t, err)
			assert.Equal(t, "A", from)
			for _, want := range sampleMessages() {
				var got ha.Message
				require.NoError(t, fr.ReadMessage(&got))
				assert.Equal(t, want, &got)
			}
			var m ha.Message
			assert.ErrorIs(t, fr.ReadMessage(&m), io.EOF)
		})
	}
}

func TestFrameReaderRejects(t *testing.T) {
	nonce := bytes.Repeat([]byte{9}, nonceLen)
	k := keysFor("the cluster secret")
	good := encodeFrames(t, k, nonce, false, sampleMessages()[:1])
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		return c
	}
	oversized := make([]byte, headerLen)
	binary.BigEndian.PutUint32(oversized, MaxFrame+1)
	oversized[5] = byte(ha.KindStrategy)
	bigData := make([]byte, headerLen)
	binary.BigEndian.PutUint32(bigData, MaxDataFrame+1)
	bigData[5] = byte(ha.KindData)
	bigRoute := make([]byte, headerLen)
	binary.BigEndian.PutUint32(bigRoute, MaxControlFrame+1)
	bigRoute[5] = byte(ha.KindRoute)
	wrongKind := bytes.Clone(encodeFrames(t, Keys{}, nonce, false, sampleMessages()[:1]))
	wrongKind[5] = byte(ha.KindStrategy) // a data message in a strategy frame
	garbage := func() []byte {
		p := []byte{0x93, 0xff, 0x01, 0x02} // an array of 3 with junk
		h := make([]byte, headerLen)
		binary.BigEndian.PutUint32(h, uint32(len(p)))
		h[5] = byte(ha.KindData)
		return append(h, p...)
	}()
	for _, tc := range []struct {
		name  string
		input []byte
		keys  Keys
		want  error
	}{
		{"oversized length prefix", oversized, Keys{}, ErrFrameTooLarge},
		{"data frame above its kind's bound", bigData, Keys{}, ErrFrameTooLarge},
		{"route frame above its kind's bound", bigRoute, Keys{}, ErrFrameTooLarge},
		{"hello kind after the hello", []byte{0, 0, 0, 1, 0, kindHello, 0}, Keys{}, ha.ErrMalformed},
		{"unknown kind", []byte{0, 0, 0, 1, 0, 99, 0}, Keys{}, ha.ErrMalformed},
		{"message kind differs from the frame's", wrongKind, Keys{}, ha.ErrMalformed},
		{"payload tampered", flip(good, headerLen+3), k, ErrBadMAC},
		{"tag tampered", flip(good, len(good)-1), k, ErrBadMAC},
		{"wrong secret", good, keysFor("another secret!"), ErrBadMAC},
		{"unauthenticated frame to a keyed node", encodeFrames(t, Keys{}, nonce, false, sampleMessages()[:1]), k, ErrAuthMismatch},
		{"authenticated frame to an open node", good, Keys{}, ErrAuthMismatch},
		{"garbage payload", garbage, Keys{}, ha.ErrMalformed},
		{"truncated frame", good[:len(good)-10], k, io.ErrUnexpectedEOF},
		{"unknown flags", append([]byte{0, 0, 0, 0, 0x80, 1}, good[headerLen:]...), k, ha.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(bytes.NewReader(tc.input), sessionMAC(tc.keys, nonce), MaxFrame)
			var m ha.Message
			err := fr.ReadMessage(&m)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "got %v, want %v", err, tc.want)
		})
	}
}

func TestFrameReplayRejected(t *testing.T) {
	nonce := bytes.Repeat([]byte{1}, nonceLen)
	k := keysFor("replay secret")
	one := encodeFrames(t, k, nonce, false, sampleMessages()[:1])
	fr := newFrameReader(bytes.NewReader(append(bytes.Clone(one), one...)), sessionMAC(k, nonce), MaxFrame)
	var m ha.Message
	require.NoError(t, fr.ReadMessage(&m))
	assert.ErrorIs(t, fr.ReadMessage(&m), ErrBadMAC, "a frame replayed on the same connection must fail")
	// A frame recorded under one nonce fails under another.
	fr = newFrameReader(bytes.NewReader(one), sessionMAC(k, bytes.Repeat([]byte{2}, nonceLen)), MaxFrame)
	assert.ErrorIs(t, fr.ReadMessage(&m), ErrBadMAC)
}

func TestHelloChecks(t *testing.T) {
	nonce := bytes.Repeat([]byte{3}, nonceLen)
	k := keysFor("hello secret")
	hello := func(k Keys, from string) []byte {
		var buf bytes.Buffer
		fw := newFrameWriter(&buf, sessionMAC(k, nonce))
		require.NoError(t, fw.writeHello(from, "B"))
		require.NoError(t, fw.Flush())
		return buf.Bytes()
	}
	good := hello(k, "A")
	assert.Len(t, good, headerLen+helloLen+macLen, "the hello has one fixed size")
	patched := func(b []byte, i int, v byte) []byte {
		c := bytes.Clone(b)
		c[i] = v
		return c
	}
	huge := patched(good, 0, 0x7f) // announces about 2 GB
	for _, tc := range []struct {
		name  string
		input []byte
		keys  Keys
		self  string
		want  string
	}{
		{"good", good, k, "B", ""},
		{"addressed to another host", good, k, "C", "addressed to"},
		{"length above the hello's size", huge, k, "B", "frame too large"},
		{"length below the hello's size", patched(good, 3, byte((helloLen-1)&0xff)), k, "B", "hello of"},
		{"a message kind as frame 0", patched(good, 5, byte(ha.KindData)), k, "B", "unknown kind"},
		{"tampered name", patched(good, headerLen+3, 'Z'), k, "B", "authentication failed"},
		{"wrong secret", good, keysFor("guess"), "B", "authentication failed"},
		{"unauthenticated hello to a keyed node", hello(Keys{}, "A"), k, "B", "disagree on authentication"},
		{"control character in a name", hello(Keys{}, "A\n"), Keys{}, "B", "invalid host name"},
		{"padding not zero", patched(hello(Keys{}, "A"), headerLen+4, 'x'), Keys{}, "B", "padding"},
		{"truncated", good[:headerLen+10], k, "B", "truncated hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(bytes.NewReader(tc.input), sessionMAC(tc.keys, nonce), MaxFrame)
			from, err := fr.readHello(tc.self)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "A", from)
				return
			}
			require.ErrorIs(t, err, ErrHandshake)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	var buf bytes.Buffer
	assert.ErrorIs(t, newFrameWriter(&buf, nil).writeHello(strings.Repeat("x", MaxHelloName+1), "B"), ErrHandshake,
		"a host name longer than the hello's field is refused by the writer")
	_, err := readChallenge(bytes.NewReader([]byte("HTTP/1.1 200 OK\r\n\r\n")))
	assert.ErrorIs(t, err, ErrHandshake)
}

func TestDeriveKeys(t *testing.T) {
	a, b := keysFor("secret-one"), keysFor("secret-two")
	assert.Len(t, a.Gossip, 32)
	assert.Len(t, a.Data, 32)
	assert.Equal(t, a, keysFor("secret-one"))
	assert.NotEqual(t, a.Data, b.Data)
	assert.NotEqual(t, a.Gossip, a.Data, "gossip and data keys are separate")
	assert.False(t, DeriveKeys(nil).Enabled())
}
