package ha

import (
	"errors"
	"fmt"

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
	// KindRoute announces who serves a fragment at which epoch (sent after a takeover).
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

// Route says which host is the primary of a fragment, which hosts receive
// its input, and at which epoch. Epochs only grow; a message stamped with an
// older epoch than its receiver knows comes from a fenced replica.
type Route struct {
	Frag      int
	Epoch     uint64
	Primary   string
	Receivers []string
	// ResetSeq says the new primary numbers its output streams afresh, so
	// downstream nodes must reset their duplicate filter for it.
	ResetSeq bool
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

// EncodeMsgpack writes a tuple as a 9-element array.
func (t *Tuple) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(10); err != nil {
		return err
	}
	for _, err := range []error{
		e.EncodeUint8(t.Stream), e.EncodeUint64(t.Seq), e.EncodeUint32(t.Key),
		e.EncodeInt64(t.Time), e.EncodeInt64(t.Emit), e.EncodeFloat64(t.Value),
		e.EncodeUint8(uint8(t.ID.Kind)), encodeIDTail(e, t.ID),
		e.EncodeUint32(t.Lineage.N), e.EncodeUint64(t.Lineage.Hash),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func encodeIDTail(e *msgpack.Encoder, id OutputID) error {
	if err := e.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := e.EncodeUint32(id.Key); err != nil {
		return err
	}
	return e.EncodeInt64(id.X)
}

// DecodeMsgpack reads a tuple written by EncodeMsgpack.
func (t *Tuple) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 10 {
		return fmt.Errorf("%w: tuple has %d fields, want 10", ErrMalformed, n)
	}
	if t.Stream, err = d.DecodeUint8(); err != nil {
		return err
	}
	if t.Seq, err = d.DecodeUint64(); err != nil {
		return err
	}
	if t.Key, err = d.DecodeUint32(); err != nil {
		return err
	}
	if t.Time, err = d.DecodeInt64(); err != nil {
		return err
	}
	if t.Emit, err = d.DecodeInt64(); err != nil {
		return err
	}
	if t.Value, err = d.DecodeFloat64(); err != nil {
		return err
	}
	k, err := d.DecodeUint8()
	if err != nil {
		return err
	}
	if k > uint8(IDPair) {
		return fmt.Errorf("%w: unknown id kind %d", ErrMalformed, k)
	}
	t.ID.Kind = IDKind(k)
	if n, err = d.DecodeArrayLen(); err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("%w: id has %d fields, want 2", ErrMalformed, n)
	}
	if t.ID.Key, err = d.DecodeUint32(); err != nil {
		return err
	}
	if t.ID.X, err = d.DecodeInt64(); err != nil {
		return err
	}
	if t.Lineage.N, err = d.DecodeUint32(); err != nil {
		return err
	}
	t.Lineage.Hash, err = d.DecodeUint64()
	return err
}

// EncodeMsgpack writes a route as a 5-element array.
func (r *Route) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(5); err != nil {
		return err
	}
	if err := e.EncodeInt(int64(r.Frag)); err != nil {
		return err
	}
	if err := e.EncodeUint64(r.Epoch); err != nil {
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
	return e.EncodeBool(r.ResetSeq)
}

// DecodeMsgpack reads a route written by EncodeMsgpack.
func (r *Route) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 5 {
		return fmt.Errorf("%w: route has %d fields, want 5", ErrMalformed, n)
	}
	if r.Frag, err = d.DecodeInt(); err != nil {
		return err
	}
	if r.Epoch, err = d.DecodeUint64(); err != nil {
		return err
	}
	if r.Primary, err = d.DecodeString(); err != nil {
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
		if r.Receivers[i], err = d.DecodeString(); err != nil {
			return err
		}
	}
	r.ResetSeq, err = d.DecodeBool()
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
	for i := range m.Tuples {
		if err := m.Tuples[i].EncodeMsgpack(e); err != nil {
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
	if m.From, err = d.DecodeString(); err != nil {
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
	if m.Type, err = d.DecodeString(); err != nil {
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
		for i := range m.Tuples {
			if err := m.Tuples[i].DecodeMsgpack(d); err != nil {
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
	m.Body, err = d.DecodeBytes()
	return err
}

// WireSize estimates the encoded size of m in bytes without encoding it;
// the simulator uses it to charge bandwidth. It is exact for data messages
// within a few bytes.
func (m *Message) WireSize() int {
	n := 16 + len(m.From) + len(m.Type) + len(m.Body)
	n += len(m.Tuples) * 48
	if m.Route != nil {
		n += 16 + len(m.Route.Primary)
		for _, h := range m.Route.Receivers {
			n += 2 + len(h)
		}
	}
	return n
}
