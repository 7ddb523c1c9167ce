package cluster

import (
	"bytes"
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
