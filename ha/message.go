package ha

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Kind is a message type.
type Kind uint8

// Message kinds understood by every node. Strategies add their own
// messages with KindStrategy and a Type string, so that a new strategy never
// needs a change in this package.
const (
	// KindData carries tuples of one stream from a fragment to its downstream.
	KindData Kind = iota + 1
	// KindRoute announces who serves a fragment at which epoch (sent after a
	// takeover); without a Route and with Type RouteQueryType it asks the
	// receiver for a route: with Seq 0 a fragment's primary for its own,
	// with Seq f+1 any host for its view of fragment f's. An answer's
	// Level is RouteFarCut when its sender is cut off on its far side.
	KindRoute
	// KindResume asks an upstream to redirect its output to the sender and
	// replay retained tuples with seq > Seq on stream Stream.
	KindResume
	// KindAck acknowledges tuples up to Seq on stream Stream; Level is 0
	// (received) or 1 (effects reached the next hop), or a strategy-defined level.
	KindAck
	// KindStrategy is a strategy-defined message: Type names it, Body holds it.
	KindStrategy
)

var kindNames = [...]string{"", "data", "route", "resume", "ack", "strategy"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// RouteQueryType is the Type of a KindRoute message that asks for a route.
const RouteQueryType = "query"

// Route says which host is the primary of a fragment, which hosts receive
// its input, and at which epoch. Epochs only grow; a message stamped with an
// older epoch than its receiver knows comes from a fenced replica.
type Route struct {
	Frag  int
	Epoch uint64
	// Version numbers the changes of Receivers within an epoch (a
	// secondary replaced). Only a takeover raises Epoch, the fencing
	// token: a primary that replaces its secondaries while cut off from
	// its data path can thus never outrank the host that took over from
	// it meanwhile.
	Version   uint64
	Primary   string
	Receivers []string
	// ResetSeq says the new primary numbers its output streams afresh, so
	// downstream nodes must reset their duplicate filter for it.
	ResetSeq bool
	// Resume says a KindResume request from the new primary follows; until
	// it arrives, upstreams hold their live output for the new primary so
	// that nothing overtakes the replay.
	Resume bool
}

// Message is everything nodes send each other. It is encoded as a msgpack
// array (see EncodeMsgpack); every message carries the sender's fragment
// epoch.
type Message struct {
	Kind   Kind
	From   string
	Frag   int // the sender's fragment (-1 for sources and the sink)
	Epoch  uint64
	Stream uint8
	Seq    uint64
	Level  uint8
	Type   string // strategy message type
	Tuples []Tuple
	Route  *Route
	Body   []byte
}

// ErrMalformed is returned (wrapped) when a wire message cannot be decoded.
var ErrMalformed = errors.New("malformed message")

// MaxTuplesPerMessage bounds a decoded batch so garbage cannot allocate unbounded memory.
const MaxTuplesPerMessage = 1 << 16

// tupleWireSize is the encoded size of a tuple: a 10-element msgpack array
// whose integers always use their fixed-width forms, so that a tuple is
// written and read in one piece (no per-field calls on the hot path) while
// staying plain msgpack that any decoder can read.
const tupleWireSize = 73

// Fixed msgpack codes used by the tuple layout.
const (
	mpArray10  = 0x9a
	mpArray2   = 0x92
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt64    = 0xd3
	mpFloat64  = 0xcb
	mpFixIntHi = 0x7f
)

// appendTuple appends t's fixed-layout encoding to b.
func appendTuple(b []byte, t *Tuple) []byte {
	b = append(b, mpArray10, t.Stream&mpFixIntHi)
	b = append(b, mpUint64)
	b = binary.BigEndian.AppendUint64(b, t.Seq)
	b = append(b, mpUint32)
	b = binary.BigEndian.AppendUint32(b, t.Key)
	b = append(b, mpInt64)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Time))
	b = append(b, mpInt64)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Emit))
	b = append(b, mpFloat64)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(t.Value))
	b = append(b, uint8(t.ID.Kind)&mpFixIntHi, mpArray2, mpUint32)
	b = binary.BigEndian.AppendUint32(b, t.ID.Key)
	b = append(b, mpInt64)
	b = binary.BigEndian.AppendUint64(b, uint64(t.ID.X))
	b = append(b, mpUint32)
	b = binary.BigEndian.AppendUint32(b, t.Lineage.N)
	b = append(b, mpUint64)
	return binary.BigEndian.AppendUint64(b, t.Lineage.Hash)
}

// parseTuple decodes the fixed layout, checking every type code.
func parseTuple(b []byte, t *Tuple) error {
	if len(b) != tupleWireSize {
		return fmt.Errorf("%w: tuple is %d bytes, want %d", ErrMalformed, len(b), tupleWireSize)
	}
	codes := [...]struct {
		at   int
		code byte
	}{{0, mpArray10}, {2, mpUint64}, {11, mpUint32}, {16, mpInt64}, {25, mpInt64}, {34, mpFloat64},
		{44, mpArray2}, {45, mpUint32}, {50, mpInt64}, {59, mpUint32}, {64, mpUint64}}
	for _, c := range codes {
		if b[c.at] != c.code {
			return fmt.Errorf("%w: tuple byte %d is 0x%02x, want 0x%02x", ErrMalformed, c.at, b[c.at], c.code)
		}
	}
	if b[1] > mpFixIntHi || b[43] > uint8(IDEnd) {
		return fmt.Errorf("%w: tuple stream or id kind out of range", ErrMalformed)
	}
	be := binary.BigEndian
	t.Stream = b[1]
	t.Seq = be.Uint64(b[3:])
	t.Key = be.Uint32(b[12:])
	t.Time = int64(be.Uint64(b[17:]))
	t.Emit = int64(be.Uint64(b[26:]))
	t.Value = math.Float64frombits(be.Uint64(b[35:]))
	t.ID.Kind = IDKind(b[43])
	t.ID.Key = be.Uint32(b[46:])
	t.ID.X = int64(be.Uint64(b[51:]))
	t.Lineage.N = be.Uint32(b[60:])
	t.Lineage.Hash = be.Uint64(b[65:])
	return nil
}

// EncodeMsgpack writes a tuple as a 10-element msgpack array
// [stream, seq, key, time, emit, value, idKind, [idKey, idX], n, hash].
func (t *Tuple) EncodeMsgpack(e *msgpack.Encoder) error {
	one := [1]Tuple{*t}
	return writeTuples(e.Writer(), one[:])
}

// DecodeMsgpack reads a tuple written by EncodeMsgpack.
func (t *Tuple) DecodeMsgpack(d *msgpack.Decoder) error {
	buf := tupleBufs.Get().(*[tupleWireSize]byte)
	defer tupleBufs.Put(buf)
	if err := d.ReadFull(buf[:]); err != nil {
		return err
	}
	return parseTuple(buf[:], t)
}

// writeTuples writes the fixed-size encodings of ts back to back: into the
// writer's spare capacity when it has room for all of them (the cluster's
// frame writer, a bytes.Buffer, has), else through a recycled scratch
// buffer, so that a data message costs no allocation for its tuples.
func writeTuples(w io.Writer, ts []Tuple) error {
	size := len(ts) * tupleWireSize
	var buf []byte
	if ab, ok := w.(availableBufferWriter); ok {
		if spare := ab.AvailableBuffer(); cap(spare) >= size {
			buf = spare
		}
	}
	var scratch *[]byte
	if buf == nil {
		scratch = batchBufs.Get().(*[]byte)
		buf = (*scratch)[:0]
	}
	for i := range ts {
		buf = appendTuple(buf, &ts[i])
	}
	_, err := w.Write(buf)
	if scratch != nil && cap(buf) <= maxPooledBatch {
		*scratch = buf[:0]
		batchBufs.Put(scratch)
	}
	return err
}

// batchBufs recycles writeTuples' scratch buffers up to maxPooledBatch
// bytes (a larger one, from a replay, is left to the garbage collector).
var batchBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBatch = 1 << 20

// availableBufferWriter is a writer that lends its spare capacity
// (bytes.Buffer and bufio.Writer do).
type availableBufferWriter interface {
	AvailableBuffer() []byte
	Write([]byte) (int, error)
}

// tupleBufs recycles the scratch buffers of tuple decoding: a buffer
// handed to an io.Reader escapes, so a local array would be allocated on
// every call.
var tupleBufs = sync.Pool{New: func() any { return new([tupleWireSize]byte) }}

// EncodeMsgpack writes a route as a 7-element array.
func (r *Route) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(7); err != nil {
		return err
	}
	if err := e.EncodeInt(int64(r.Frag)); err != nil {
		return err
	}
	if err := e.EncodeUint64(r.Epoch); err != nil {
		return err
	}
	if err := e.EncodeUint64(r.Version); err != nil {
		return err
	}
	if err := e.EncodeString(r.Primary); err != nil {
		return err
	}
	if err := e.EncodeArrayLen(len(r.Receivers)); err != nil {
		return err
	}
	for _, h := range r.Receivers {
		if err := e.EncodeString(h); err != nil {
			return err
		}
	}
	if err := e.EncodeBool(r.ResetSeq); err != nil {
		return err
	}
	return e.EncodeBool(r.Resume)
}

// DecodeMsgpack reads a route written by EncodeMsgpack.
func (r *Route) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 7 {
		return fmt.Errorf("%w: route has %d fields, want 7", ErrMalformed, n)
	}
	if r.Frag, err = d.DecodeInt(); err != nil {
		return err
	}
	if r.Epoch, err = d.DecodeUint64(); err != nil {
		return err
	}
	if r.Version, err = d.DecodeUint64(); err != nil {
		return err
	}
	if r.Primary, err = decodeName(d, "route primary"); err != nil {
		return err
	}
	if n, err = d.DecodeArrayLen(); err != nil {
		return err
	}
	if n < 0 || n > 1024 {
		return fmt.Errorf("%w: route has %d receivers", ErrMalformed, n)
	}
	r.Receivers = make([]string, n)
	for i := range r.Receivers {
		if r.Receivers[i], err = decodeName(d, "route receiver"); err != nil {
			return err
		}
	}
	if r.ResetSeq, err = d.DecodeBool(); err != nil {
		return err
	}
	r.Resume, err = d.DecodeBool()
	return err
}

// EncodeMsgpack writes a message as an 11-element array.
func (m *Message) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(11); err != nil {
		return err
	}
	for _, err := range []error{
		e.EncodeUint8(uint8(m.Kind)), e.EncodeString(m.From), e.EncodeInt(int64(m.Frag)),
		e.EncodeUint64(m.Epoch), e.EncodeUint8(m.Stream), e.EncodeUint64(m.Seq),
		e.EncodeUint8(m.Level), e.EncodeString(m.Type),
	} {
		if err != nil {
			return err
		}
	}
	if err := e.EncodeArrayLen(len(m.Tuples)); err != nil {
		return err
	}
	if len(m.Tuples) > 0 {
		if err := writeTuples(e.Writer(), m.Tuples); err != nil {
			return err
		}
	}
	if m.Route == nil {
		if err := e.EncodeNil(); err != nil {
			return err
		}
	} else if err := m.Route.EncodeMsgpack(e); err != nil {
		return err
	}
	return e.EncodeBytes(m.Body)
}

// DecodeMsgpack reads a message written by EncodeMsgpack. Malformed input
// yields an error wrapping ErrMalformed or the decoder's error, never a panic.
func (m *Message) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 11 {
		return fmt.Errorf("%w: message has %d fields, want 11", ErrMalformed, n)
	}
	k, err := d.DecodeUint8()
	if err != nil {
		return err
	}
	if k == 0 || k > uint8(KindStrategy) {
		return fmt.Errorf("%w: unknown kind %d", ErrMalformed, k)
	}
	m.Kind = Kind(k)
	if m.From, err = decodeName(d, "sender"); err != nil {
		return err
	}
	if m.Frag, err = d.DecodeInt(); err != nil {
		return err
	}
	if m.Epoch, err = d.DecodeUint64(); err != nil {
		return err
	}
	if m.Stream, err = d.DecodeUint8(); err != nil {
		return err
	}
	if m.Seq, err = d.DecodeUint64(); err != nil {
		return err
	}
	if m.Level, err = d.DecodeUint8(); err != nil {
		return err
	}
	if m.Type, err = decodeName(d, "message type"); err != nil {
		return err
	}
	if n, err = d.DecodeArrayLen(); err != nil {
		return err
	}
	if n > MaxTuplesPerMessage {
		return fmt.Errorf("%w: %d tuples in one message (max %d)", ErrMalformed, n, MaxTuplesPerMessage)
	}
	m.Tuples = nil
	if n > 0 {
		m.Tuples = make([]Tuple, n)
		buf := tupleBufs.Get().(*[tupleWireSize]byte)
		defer tupleBufs.Put(buf)
		for i := range m.Tuples {
			if err := d.ReadFull(buf[:]); err != nil {
				return fmt.Errorf("tuple %d: %w", i, err)
			}
			if err := parseTuple(buf[:], &m.Tuples[i]); err != nil {
				return fmt.Errorf("tuple %d: %w", i, err)
			}
		}
	}
	m.Route = nil
	code, err := d.PeekCode()
	if err != nil {
		return err
	}
	if code == 0xc0 { // nil
		if err := d.DecodeNil(); err != nil {
			return err
		}
	} else {
		m.Route = new(Route)
		if err := m.Route.DecodeMsgpack(d); err != nil {
			return fmt.Errorf("route: %w", err)
		}
	}
	m.Body, err = decodeBody(d)
	return err
}

// Validate checks what a decoder alone cannot: a msgpack nil decodes into
// a zero Message without calling DecodeMsgpack, so receivers validate every
// message read from the wire.
func (m *Message) Validate() error {
	if m.Kind == 0 || m.Kind > KindStrategy {
		return fmt.Errorf("%w: unknown kind %d", ErrMalformed, m.Kind)
	}
	if m.Kind == KindRoute && m.Route == nil && m.Type != RouteQueryType {
		return fmt.Errorf("%w: route message without a route", ErrMalformed)
	}
	if len(m.Tuples) > MaxTuplesPerMessage {
		return fmt.Errorf("%w: %d tuples in one message", ErrMalformed, len(m.Tuples))
	}
	return nil
}

// WireSize estimates the encoded size of m in bytes without encoding it;
// the simulator uses it to charge bandwidth. It is exact for data messages
// within a few bytes.
func (m *Message) WireSize() int {
	n := 16 + len(m.From) + len(m.Type) + len(m.Body)
	n += len(m.Tuples) * tupleWireSize
	if m.Route != nil {
		n += 24 + len(m.Route.Primary)
		for _, h := range m.Route.Receivers {
			n += 2 + len(h)
		}
	}
	return n
}
