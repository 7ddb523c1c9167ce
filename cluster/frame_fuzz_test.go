package cluster

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/streamha/streamha/ha"
)

// FuzzFrameReader feeds arbitrary bytes to a connection's frame reader, as
// a peer on the data port could: with and without a cluster secret, the
// reader must return a message or an error — never panic, and never accept
// more than MaxFrame per frame.
func FuzzFrameReader(f *testing.F) {
	nonce := bytes.Repeat([]byte{3}, nonceLen)
	for _, k := range []Keys{{}, keysFor("fuzz secret")} {
		var buf bytes.Buffer
		fw := newFrameWriter(&buf, sessionMAC(k, nonce))
		if err := fw.writeHello("A", "B"); err != nil {
			f.Fatal(err)
		}
		for _, m := range sampleMessages() {
			if err := fw.WriteMessage(m); err != nil {
				f.Fatal(err)
			}
		}
		if err := fw.Flush(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), k.Enabled())
	}
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0x93, 1, 0xa1, 'A', 0xc0}, false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0}, false)
	f.Fuzz(func(t *testing.T, b []byte, keyed bool) {
		var k Keys
		if keyed {
			k = keysFor("fuzz secret")
		}
		fr := newFrameReader(bytes.NewReader(b), sessionMAC(k, nonce), 1<<20)
		if _, err := fr.readHello("B"); err != nil {
			return
		}
		for range 64 {
			var m ha.Message
			if err := fr.ReadMessage(&m); err != nil {
				return
			}
			if err := m.Validate(); err != nil {
				return
			}
		}
	})
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadHello feeds arbitrary bytes to the handshake as a stranger on
// the data port could: the node reads at most one fixed-size hello (a
// header claiming gigabytes costs nothing), and a hello it accepts names a
// valid host and is addressed to it.
func FuzzReadHello(f *testing.F) {
	nonce := bytes.Repeat([]byte{5}, nonceLen)
	for _, k := range []Keys{{}, keysFor("fuzz secret")} {
		var buf bytes.Buffer
		fw := newFrameWriter(&buf, sessionMAC(k, nonce))
		if err := fw.writeHello("A", "B"); err != nil {
			f.Fatal(err)
		}
		if err := fw.Flush(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), k.Enabled())
	}
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, flagMAC, kindHello}, true)
	f.Add([]byte{0, 0, 2, 2, 0, byte(ha.KindRoute)}, false)
	f.Fuzz(func(t *testing.T, b []byte, keyed bool) {
		var k Keys
		if keyed {
			k = keysFor("fuzz secret")
		}
		cr := &countingReader{r: bytes.NewReader(b)}
		fr := newFrameReader(cr, sessionMAC(k, nonce), MaxFrame)
		from, err := fr.readHello("B")
		if cr.n > headerLen+helloLen+macLen {
			t.Fatalf("the hello read %d bytes, more than one hello (%d)", cr.n, headerLen+helloLen+macLen)
		}
		if err != nil {
			if !errors.Is(err, ErrHandshake) {
				t.Fatalf("a hello error that is not ErrHandshake: %v", err)
			}
			return
		}
		if from == "" || len(from) > MaxHelloName || !validHostName([]byte(from)) {
			t.Fatalf("accepted sender %q", from)
		}
	})
}
