package cluster

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// Wire format of the data plane. Every TCP connection carries frames in one
// direction, from the dialer to the acceptor:
//
//	acceptor → dialer: challenge = "SHA" 0x01 + 16-byte random nonce
//	dialer → acceptor: frame 0 = hello [version, from host, to host]
//	dialer → acceptor: frame 1, 2, … = one ha.Message each (msgpack array form)
//
// A frame is a 5-byte header (big-endian uint32 payload length, one flags
// byte), the payload, and — when the cluster has a secret — a 32-byte
// HMAC-SHA256 tag over (frame counter, header, payload) keyed with a
// per-connection session key derived from the cluster's data key and the
// acceptor's nonce. The counter makes replayed, reordered or dropped frames
// fail verification; the nonce makes a recorded connection useless later.
const (
	// MaxFrame is the largest accepted frame payload, in bytes. A larger
	// length prefix closes the connection (it is garbage or an attack).
	MaxFrame = 16 << 20
	// ProtocolVersion is the data-plane version carried in the hello frame.
	ProtocolVersion = 1

	headerLen = 5
	macLen    = sha256.Size
	nonceLen  = 16
	flagMAC   = 1
)

var challengeMagic = [4]byte{'S', 'H', 'A', 1}

// Sentinel errors of the frame codec; a reader returning any of them has
// closed nothing itself — the caller closes the connection.
var (
	// ErrFrameTooLarge is returned for a length prefix above MaxFrame.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrBadMAC is returned when a frame's authentication tag is wrong.
	ErrBadMAC = errors.New("frame authentication failed")
	// ErrAuthMismatch is returned when one side has a cluster secret and the other does not.
	ErrAuthMismatch = errors.New("peer and node disagree on authentication (is the cluster secret set on both?)")
	// ErrHandshake is returned for a bad challenge or hello.
	ErrHandshake = errors.New("bad handshake")
)

// Keys are the keys derived from a cluster secret. The zero value (no
// secret) means no encryption and no authentication.
type Keys struct {
	// Gossip is the memberlist encryption key: SHA-256 of the secret (32 bytes, AES-256).
	Gossip []byte
	// Data is the data-plane HMAC key.
	Data []byte
	// Control is the bearer token the control endpoint demands.
	Control string
}

// DeriveKeys derives every key from secret; an empty secret yields the zero Keys.
func DeriveKeys(secret []byte) Keys {
	if len(secret) == 0 {
		return Keys{}
	}
	g := sha256.Sum256(secret)
	d := hmac.New(sha256.New, secret)
	d.Write([]byte("streamha data plane v1"))
	c := hmac.New(sha256.New, secret)
	c.Write([]byte("streamha control v1"))
	return Keys{Gossip: g[:], Data: d.Sum(nil), Control: fmt.Sprintf("%x", c.Sum(nil))}
}

// Enabled reports whether a secret is configured.
func (k Keys) Enabled() bool { return len(k.Data) > 0 }

func sessionMAC(k Keys, nonce []byte) hash.Hash {
	if !k.Enabled() {
		return nil
	}
	s := hmac.New(sha256.New, k.Data)
	s.Write([]byte("session"))
	s.Write(nonce)
	return hmac.New(sha256.New, s.Sum(nil))
}

// frameWriter writes authenticated frames of msgpack-encoded messages
// through one bufio.Writer, with one msgpack Encoder per connection.
type frameWriter struct {
	w   *bufio.Writer
	mac hash.Hash
	ctr uint64
	buf bytes.Buffer
	enc *msgpack.Encoder
	hdr [headerLen + 8]byte
	tag [macLen]byte
}

func newFrameWriter(w io.Writer, mac hash.Hash) *frameWriter {
	fw := &frameWriter{w: bufio.NewWriterSize(w, 64<<10), mac: mac}
	fw.enc = msgpack.NewEncoder(&fw.buf)
	return fw
}

// writeFrame writes one frame; the caller flushes.
func (fw *frameWriter) writeFrame(payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("%w: %d bytes (max %d)", ErrFrameTooLarge, len(payload), MaxFrame)
	}
	h := fw.hdr[:headerLen]
	binary.BigEndian.PutUint32(h, uint32(len(payload)))
	h[4] = 0
	if fw.mac != nil {
		h[4] = flagMAC
	}
	if _, err := fw.w.Write(h); err != nil {
		return err
	}
	if _, err := fw.w.Write(payload); err != nil {
		return err
	}
	if fw.mac != nil {
		if _, err := fw.w.Write(frameTag(fw.mac, fw.ctr, h, payload, fw.tag[:0])); err != nil {
			return err
		}
	}
	fw.ctr++
	return nil
}

func frameTag(mac hash.Hash, ctr uint64, hdr, payload, dst []byte) []byte {
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], ctr)
	mac.Reset()
	mac.Write(c[:])
	mac.Write(hdr)
	mac.Write(payload)
	return mac.Sum(dst)
}

// WriteMessage encodes m and writes it as one frame.
func (fw *frameWriter) WriteMessage(m *ha.Message) error {
	fw.buf.Reset()
	if err := m.EncodeMsgpack(fw.enc); err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return fw.writeFrame(fw.buf.Bytes())
}

// writeHello writes frame 0 naming the sender and the intended receiver.
func (fw *frameWriter) writeHello(from, to string) error {
	fw.buf.Reset()
	if err := fw.enc.Encode([]any{ProtocolVersion, from, to}); err != nil {
		return err
	}
	return fw.writeFrame(fw.buf.Bytes())
}

// Flush flushes the buffered frames to the connection.
func (fw *frameWriter) Flush() error { return fw.w.Flush() }

// frameReader reads and verifies frames and decodes messages with one
// msgpack Decoder per connection.
type frameReader struct {
	r       *bufio.Reader
	mac     hash.Hash
	keyed   bool
	ctr     uint64
	max     int
	payload []byte
	br      bytes.Reader
	dec     *msgpack.Decoder
	tag     [macLen]byte
	want    [macLen]byte
}

func newFrameReader(r io.Reader, mac hash.Hash, maxFrame int) *frameReader {
	fr := &frameReader{r: bufio.NewReaderSize(r, 64<<10), mac: mac, keyed: mac != nil, max: maxFrame}
	fr.dec = msgpack.NewDecoder(&fr.br)
	return fr
}

// readFrame returns the next verified payload (valid until the next call).
func (fr *frameReader) readFrame() ([]byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if int64(n) > int64(fr.max) {
		return nil, fmt.Errorf("%w: %d bytes (max %d)", ErrFrameTooLarge, n, fr.max)
	}
	switch {
	case h[4]&^flagMAC != 0:
		return nil, fmt.Errorf("%w: unknown frame flags %#x", ha.ErrMalformed, h[4])
	case (h[4]&flagMAC != 0) != fr.keyed:
		return nil, ErrAuthMismatch
	}
	if cap(fr.payload) < int(n) {
		fr.payload = make([]byte, n)
	}
	p := fr.payload[:n]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return nil, fmt.Errorf("truncated frame: %w", err)
	}
	if fr.keyed {
		if _, err := io.ReadFull(fr.r, fr.tag[:]); err != nil {
			return nil, fmt.Errorf("truncated frame tag: %w", err)
		}
		if !hmac.Equal(frameTag(fr.mac, fr.ctr, h[:], p, fr.want[:0]), fr.tag[:]) {
			return nil, fmt.Errorf("%w (frame %d)", ErrBadMAC, fr.ctr)
		}
	}
	fr.ctr++
	return p, nil
}

// ReadMessage reads the next frame into m.
func (fr *frameReader) ReadMessage(m *ha.Message) error {
	p, err := fr.readFrame()
	if err != nil {
		return err
	}
	fr.br.Reset(p)
	fr.dec.Reset(&fr.br)
	if err := m.DecodeMsgpack(fr.dec); err != nil {
		if errors.Is(err, ha.ErrMalformed) {
			return err
		}
		return fmt.Errorf("%w: %w", ha.ErrMalformed, err)
	}
	if fr.br.Len() != 0 {
		return fmt.Errorf("%w: %d trailing bytes after the message", ha.ErrMalformed, fr.br.Len())
	}
	return nil
}

// readHello reads frame 0 and returns the sender it names; it fails unless
// the frame is addressed to self.
func (fr *frameReader) readHello(self string) (string, error) {
	p, err := fr.readFrame()
	if err != nil {
		return "", err
	}
	fr.br.Reset(p)
	fr.dec.Reset(&fr.br)
	// Decoded field by field: a generic decode of a lying array or string
	// length would allocate whatever the length claims.
	if n, err := fr.dec.DecodeArrayLen(); err != nil || n != 3 {
		return "", fmt.Errorf("%w: hello is not [version, from, to]", ErrHandshake)
	}
	ver, err := fr.dec.DecodeInt64()
	if err != nil {
		return "", fmt.Errorf("%w: hello version: %w", ErrHandshake, err)
	}
	from, err := ha.DecodeName(fr.dec, "hello sender")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	to, err := ha.DecodeName(fr.dec, "hello addressee")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	switch {
	case ver != ProtocolVersion:
		return "", fmt.Errorf("%w: protocol version %d, want %d", ErrHandshake, ver, ProtocolVersion)
	case from == "":
		return "", fmt.Errorf("%w: hello names no sender", ErrHandshake)
	case to != self:
		return "", fmt.Errorf("%w: hello from %q is addressed to %q, this is %q", ErrHandshake, from, to, self)
	}
	return from, nil
}

// newChallenge returns the acceptor's challenge bytes and nonce.
func newChallenge() ([]byte, []byte) {
	c := make([]byte, len(challengeMagic)+nonceLen)
	copy(c, challengeMagic[:])
	_, _ = rand.Read(c[len(challengeMagic):])
	return c, c[len(challengeMagic):]
}

// readChallenge reads the acceptor's challenge and returns its nonce.
func readChallenge(r io.Reader) ([]byte, error) {
	c := make([]byte, len(challengeMagic)+nonceLen)
	if _, err := io.ReadFull(r, c); err != nil {
		return nil, fmt.Errorf("%w: read challenge: %w", ErrHandshake, err)
	}
	if !bytes.Equal(c[:len(challengeMagic)], challengeMagic[:]) {
		return nil, fmt.Errorf("%w: not a streamha data port", ErrHandshake)
	}
	return c[len(challengeMagic):], nil
}
