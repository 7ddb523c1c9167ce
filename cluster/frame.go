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
	"unicode"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// Wire format of the data plane. Every TCP connection carries frames in one
// direction, from the dialer to the acceptor:
//
//	acceptor → dialer: challenge = "SHA" 0x02 + 16-byte random nonce
//	dialer → acceptor: frame 0 = hello (fixed size, see helloLen)
//	dialer → acceptor: frame 1, 2, … = one ha.Message each (msgpack array form)
//
// A frame is a 6-byte header (big-endian uint32 payload length, one flags
// byte, one kind byte: 0 for the hello, the ha.Kind of the message
// otherwise), the payload, and — when the cluster has a secret — a 32-byte
// HMAC-SHA256 tag over (frame counter, header, payload) keyed with a
// per-connection session key derived from the cluster's data key and the
// acceptor's nonce. The counter makes replayed, reordered or dropped frames
// fail verification; the nonce makes a recorded connection useless later.
//
// Nothing is allocated for a frame before its header is checked against
// the bound of its kind (frameLimit), and the hello — the only frame a
// stranger can make a node read — has one fixed size, is read into a
// fixed buffer and has its tag checked before the connection gets any
// buffer of its own.
const (
	// MaxFrame is the largest accepted frame payload, in bytes (strategy
	// messages: checkpoints, state transfers). A larger length prefix
	// closes the connection (it is garbage or an attack).
	MaxFrame = 16 << 20
	// MaxDataFrame bounds a data frame: MaxTuplesPerMessage tuples of 73
	// bytes each plus the message's header fields, rounded up.
	MaxDataFrame = 8 << 20
	// MaxControlFrame bounds a route, resume or ack frame: a few numbers and
	// at most a few hundred host names.
	MaxControlFrame = 256 << 10
	// ProtocolVersion is the data-plane version carried in the hello frame.
	ProtocolVersion = 2
	// MaxHelloName bounds a host name in the hello, in bytes.
	MaxHelloName = 255

	headerLen = 6
	macLen    = sha256.Size
	nonceLen  = 16
	flagMAC   = 1
	kindHello = 0
	// helloLen is the hello payload: version (uint16), then the sender's
	// and the addressee's names, each a length byte and MaxHelloName
	// bytes of zero-padded name.
	helloLen = 2 + 2*(1+MaxHelloName)
)

// frameLimit is the largest payload accepted for a frame of kind (at most
// max), or -1 for a kind that is never valid after the hello.
func frameLimit(kind byte, max int) int {
	switch ha.Kind(kind) {
	case ha.KindData:
		return min(max, MaxDataFrame)
	case ha.KindRoute, ha.KindResume, ha.KindAck:
		return min(max, MaxControlFrame)
	case ha.KindStrategy:
		return max
	}
	return -1
}

var challengeMagic = [4]byte{'S', 'H', 'A', ProtocolVersion}

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
	// Control keys the per-request tags the control endpoint demands
	// (signRequest, controlAuth).
	Control []byte
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
	return Keys{Gossip: g[:], Data: d.Sum(nil), Control: c.Sum(nil)}
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

// writeFrame writes one frame of kind; the caller flushes.
func (fw *frameWriter) writeFrame(kind byte, payload []byte) error {
	limit := helloLen
	if kind != kindHello {
		limit = frameLimit(kind, MaxFrame)
	}
	if len(payload) > limit {
		return fmt.Errorf("%w: %s frame of %d bytes (max %d)", ErrFrameTooLarge, ha.Kind(kind), len(payload), limit)
	}
	h := fw.hdr[:headerLen]
	binary.BigEndian.PutUint32(h, uint32(len(payload)))
	h[4] = 0
	if fw.mac != nil {
		h[4] = flagMAC
	}
	h[5] = kind
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
	return fw.writeFrame(byte(m.Kind), fw.buf.Bytes())
}

// writeHello writes frame 0 naming the sender and the intended receiver.
func (fw *frameWriter) writeHello(from, to string) error {
	var p [helloLen]byte
	binary.BigEndian.PutUint16(p[:2], ProtocolVersion)
	for i, name := range []string{from, to} {
		if name == "" || len(name) > MaxHelloName {
			return fmt.Errorf("%w: host name %q must have 1 to %d bytes", ErrHandshake, name, MaxHelloName)
		}
		off := 2 + i*(1+MaxHelloName)
		p[off] = byte(len(name))
		copy(p[off+1:], name)
	}
	return fw.writeFrame(kindHello, p[:])
}

// Flush flushes the buffered frames to the connection.
func (fw *frameWriter) Flush() error { return fw.w.Flush() }

// frameReader reads and verifies frames and decodes messages with one
// msgpack Decoder per connection. Its buffers are allocated on the first
// frame after the hello: a connection that never authenticates costs a
// fixed few hundred bytes.
type frameReader struct {
	src     io.Reader
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
	return &frameReader{src: r, mac: mac, keyed: mac != nil, max: maxFrame}
}

// header reads and checks a frame header against limit(kind); it returns
// the payload length and the kind.
func (fr *frameReader) header(r io.Reader, h *[headerLen]byte, limit func(kind byte) int) (int, byte, error) {
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	switch {
	case h[4]&^flagMAC != 0:
		return 0, 0, fmt.Errorf("%w: unknown frame flags %#x", ha.ErrMalformed, h[4])
	case (h[4]&flagMAC != 0) != fr.keyed:
		return 0, 0, ErrAuthMismatch
	}
	max := limit(h[5])
	if max < 0 {
		return 0, 0, fmt.Errorf("%w: frame of unknown kind %d", ha.ErrMalformed, h[5])
	}
	if int64(n) > int64(max) {
		return 0, 0, fmt.Errorf("%w: %s frame of %d bytes (max %d)", ErrFrameTooLarge, ha.Kind(h[5]), n, max)
	}
	return int(n), h[5], nil
}

// verify reads the tag of a frame (when keyed) and checks it.
func (fr *frameReader) verify(r io.Reader, h []byte, p []byte) error {
	if fr.keyed {
		if _, err := io.ReadFull(r, fr.tag[:]); err != nil {
			return fmt.Errorf("truncated frame tag: %w", err)
		}
		if !hmac.Equal(frameTag(fr.mac, fr.ctr, h, p, fr.want[:0]), fr.tag[:]) {
			return fmt.Errorf("%w (frame %d)", ErrBadMAC, fr.ctr)
		}
	}
	fr.ctr++
	return nil
}

// readFrame returns the kind and the next verified payload (valid until
// the next call).
func (fr *frameReader) readFrame() (byte, []byte, error) {
	if fr.r == nil {
		fr.r = bufio.NewReaderSize(fr.src, 64<<10)
		fr.dec = msgpack.NewDecoder(&fr.br)
	}
	var h [headerLen]byte
	n, kind, err := fr.header(fr.r, &h, func(k byte) int { return frameLimit(k, fr.max) })
	if err != nil {
		return 0, nil, err
	}
	if cap(fr.payload) < n {
		fr.payload = make([]byte, n)
	}
	p := fr.payload[:n]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return 0, nil, fmt.Errorf("truncated frame: %w", err)
	}
	if err := fr.verify(fr.r, h[:], p); err != nil {
		return 0, nil, err
	}
	return kind, p, nil
}

// ReadMessage reads the next frame into m.
func (fr *frameReader) ReadMessage(m *ha.Message) error {
	kind, p, err := fr.readFrame()
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
	if byte(m.Kind) != kind {
		return fmt.Errorf("%w: a %s message in a %s frame", ha.ErrMalformed, m.Kind, ha.Kind(kind))
	}
	return nil
}

// readHello reads frame 0 straight from the connection into a fixed
// buffer, checks its tag before looking at its contents, and returns the
// sender it names; it fails unless the frame is addressed to self. It
// must be the first read of fr.
func (fr *frameReader) readHello(self string) (string, error) {
	var (
		h [headerLen]byte
		p [helloLen]byte
	)
	n, kind, err := fr.header(fr.src, &h, func(k byte) int {
		if k != kindHello {
			return -1
		}
		return helloLen
	})
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if kind != kindHello || n != helloLen {
		return "", fmt.Errorf("%w: hello of %d bytes, want %d", ErrHandshake, n, helloLen)
	}
	if _, err := io.ReadFull(fr.src, p[:]); err != nil {
		return "", fmt.Errorf("%w: truncated hello: %w", ErrHandshake, err)
	}
	if err := fr.verify(fr.src, h[:], p[:]); err != nil {
		return "", fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return parseHello(&p, self)
}

// parseHello decodes a verified hello payload.
func parseHello(p *[helloLen]byte, self string) (string, error) {
	var names [2]string
	for i := range names {
		off := 2 + i*(1+MaxHelloName)
		n := int(p[off])
		field := p[off+1 : off+1+MaxHelloName]
		if n == 0 || !validHostName(field[:n]) {
			return "", fmt.Errorf("%w: hello carries an empty or invalid host name", ErrHandshake)
		}
		for _, b := range field[n:] {
			if b != 0 {
				return "", fmt.Errorf("%w: hello name padding is not zero", ErrHandshake)
			}
		}
		names[i] = string(field[:n])
	}
	from, to := names[0], names[1]
	if ver := binary.BigEndian.Uint16(p[:2]); ver != ProtocolVersion {
		return "", fmt.Errorf("%w: protocol version %d, want %d", ErrHandshake, ver, ProtocolVersion)
	}
	if to != self {
		return "", fmt.Errorf("%w: hello from %q is addressed to %q, this is %q", ErrHandshake, from, to, self)
	}
	return from, nil
}

// validHostName reports whether b is printable UTF-8 without spaces or
// control characters (what an experiment file accepts as a host name).
func validHostName(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r <= ' ' || r == 0x7f || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
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
