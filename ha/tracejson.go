package ha

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"
)

// The JSON Lines form of a trace, one event per line: events are written
// by hand (AppendEventJSON) but for the few encoding/json must escape or
// that carry Stats; deliveries, nearly every line of a long run, are read
// by hand, the rest with encoding/json.

// EventWriter writes trace events to w as JSON Lines, exactly as a
// json.Encoder would, nearly all without reflection.
type EventWriter struct {
	w    io.Writer
	enc  *json.Encoder
	line []byte
}

// NewEventWriter returns an EventWriter on w (buffer w: one Write per event).
func NewEventWriter(w io.Writer) *EventWriter {
	return &EventWriter{w: w, enc: json.NewEncoder(w), line: make([]byte, 0, 256)}
}

// Write writes e as one line.
func (w *EventWriter) Write(e *Event) error {
	line, ok := AppendEventJSON(w.line[:0], e)
	if !ok {
		return w.enc.Encode(e)
	}
	w.line = line
	_, err := w.w.Write(line)
	return err
}

// UnmarshalEventLine decodes one trace line. A delivery in the form
// AppendDeliveryJSON writes is parsed by hand and its tuple stored in
// *scratch (the event's Tuple then points to it: copy it to keep it past
// the next call); anything else goes through encoding/json.
func UnmarshalEventLine(line []byte, scratch *Tuple) (Event, error) {
	if e, ok := ParseDeliveryJSON(line, scratch); ok {
		return e, nil
	}
	var e Event
	err := json.Unmarshal(line, &e)
	return e, err
}

// AppendDeliveryJSON appends delivery event e as one line exactly as
// json.Encoder writes it, newline included, or returns b unchanged and
// false when e is not a plain delivery (another kind, another field set, a
// host name json would escape, a value json cannot encode). Its lines are
// the ones ParseDeliveryJSON reads back by hand.
func AppendDeliveryJSON(b []byte, e *Event) ([]byte, bool) {
	t := e.Tuple
	if e.Kind != EvDeliver || t == nil || e.Peer != "" || e.Frag != 0 || e.Epoch != 0 || e.Seq != 0 ||
		e.N != 0 || e.Note != "" || e.Stats != nil || !finiteJSON(t) || !plainJSON(e.Host) {
		return b, false
	}
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, int64(e.T), 10)
	b = append(b, `,"kind":"deliver"`...)
	if e.Host != "" {
		b = appendJSONString(b, `,"host":"`, e.Host)
	}
	return append(appendTupleJSON(b, t), "}\n"...), true
}

// AppendEventJSON appends e as one line exactly as json.Encoder writes it,
// newline included, or returns b unchanged and false when it cannot: an
// event with Stats (one per node at the end of a run), a string json would
// escape (quotes, backslashes, control characters, <, >, &, anything
// beyond ASCII) or a tuple value json refuses. The encoder writes those.
// Trace writers use it for every event: encoding/json's reflection was
// most of their time, and in a node loop woken once per ack round its
// cold code cost 10–80 µs an event against 0.3 µs warm. Plain deliveries,
// nearly every line of a long trace, take AppendDeliveryJSON's shorter path.
func AppendEventJSON(b []byte, e *Event) ([]byte, bool) {
	if line, ok := AppendDeliveryJSON(b, e); ok {
		return line, true
	}
	t := e.Tuple
	if e.Stats != nil || !plainJSON(string(e.Kind)) || !plainJSON(e.Host) || !plainJSON(e.Peer) || !plainJSON(e.Note) ||
		t != nil && !finiteJSON(t) {
		return b, false
	}
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, int64(e.T), 10)
	b = appendJSONString(b, `,"kind":"`, string(e.Kind))
	if e.Host != "" {
		b = appendJSONString(b, `,"host":"`, e.Host)
	}
	if e.Peer != "" {
		b = appendJSONString(b, `,"peer":"`, e.Peer)
	}
	if e.Frag != 0 {
		b = append(b, `,"frag":`...)
		b = strconv.AppendInt(b, int64(e.Frag), 10)
	}
	if e.Epoch != 0 {
		b = append(b, `,"epoch":`...)
		b = strconv.AppendUint(b, e.Epoch, 10)
	}
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, e.Seq, 10)
	}
	if e.N != 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, e.N, 10)
	}
	if e.Note != "" {
		b = appendJSONString(b, `,"note":"`, e.Note)
	}
	if t != nil {
		b = appendTupleJSON(b, t)
	}
	return append(b, "}\n"...), true
}

// finiteJSON reports whether json can encode t: its value is finite.
func finiteJSON(t *Tuple) bool { return !math.IsNaN(t.Value) && !math.IsInf(t.Value, 0) }

// appendTupleJSON appends the "tuple" member of an event (its value finite).
func appendTupleJSON(b []byte, t *Tuple) []byte {
	b = append(b, `,"tuple":{"Stream":`...)
	b = strconv.AppendUint(b, uint64(t.Stream), 10)
	b = append(b, `,"Seq":`...)
	b = strconv.AppendUint(b, t.Seq, 10)
	b = append(b, `,"Key":`...)
	b = strconv.AppendUint(b, uint64(t.Key), 10)
	b = append(b, `,"Time":`...)
	b = strconv.AppendInt(b, t.Time, 10)
	b = append(b, `,"Emit":`...)
	b = strconv.AppendInt(b, t.Emit, 10)
	b = append(b, `,"Value":`...)
	b = appendJSONFloat(b, t.Value)
	b = append(b, `,"ID":{"Kind":`...)
	b = strconv.AppendUint(b, uint64(t.ID.Kind), 10)
	b = append(b, `,"Key":`...)
	b = strconv.AppendUint(b, uint64(t.ID.Key), 10)
	b = append(b, `,"X":`...)
	b = strconv.AppendInt(b, t.ID.X, 10)
	b = append(b, `},"Lineage":{"N":`...)
	b = strconv.AppendUint(b, uint64(t.Lineage.N), 10)
	b = append(b, `,"Hash":`...)
	b = strconv.AppendUint(b, t.Lineage.Hash, 10)
	return append(b, "}}"...)
}

// plainJSON reports whether json writes s as it is between quotes:
// printable ASCII other than the quote, the backslash and the three
// characters its encoder escapes for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendJSONString appends key (ending in the opening quote), the plain
// string s and the closing quote.
func appendJSONString(b []byte, key, s string) []byte {
	b = append(b, key...)
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONFloat appends a finite float64 the way encoding/json does:
// the shortest form, in exponent notation below 1e-6 and from 1e21 on,
// with a one-digit negative exponent not zero-padded.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// ParseDeliveryJSON reads one trace line holding a delivery in exactly
// the form AppendDeliveryJSON writes (without its newline), storing the
// tuple in *t. Anything else — another kind, other fields or order,
// escapes in the host, a number json would not accept or that does not fit
// its field — is not its to judge: it reports false, and the caller hands
// the line to encoding/json, which decodes it or names the error. What it
// accepts, json decodes to the same event (TestParseDeliveryAgreesWithJSON).
func ParseDeliveryJSON(line []byte, t *Tuple) (Event, bool) {
	p := deliveryParser{b: line}
	return p.parse(t)
}

// deliveryParser is ParseDeliveryJSON's cursor.
type deliveryParser struct {
	b   []byte
	bad bool
}

func (p *deliveryParser) parse(t *Tuple) (Event, bool) {
	e := Event{Kind: EvDeliver, Tuple: t}
	p.lit(`{"t":`)
	e.T = time.Duration(p.int(64))
	p.lit(`,"kind":"deliver"`)
	if bytes.HasPrefix(p.b, []byte(`,"host":"`)) {
		p.lit(`,"host":"`)
		e.Host = p.host()
	}
	p.lit(`,"tuple":{"Stream":`)
	t.Stream = uint8(p.uint(8))
	p.lit(`,"Seq":`)
	t.Seq = p.uint(64)
	p.lit(`,"Key":`)
	t.Key = uint32(p.uint(32))
	p.lit(`,"Time":`)
	t.Time = p.int(64)
	p.lit(`,"Emit":`)
	t.Emit = p.int(64)
	p.lit(`,"Value":`)
	t.Value = p.float()
	p.lit(`,"ID":{"Kind":`)
	t.ID.Kind = IDKind(p.uint(8))
	p.lit(`,"Key":`)
	t.ID.Key = uint32(p.uint(32))
	p.lit(`,"X":`)
	t.ID.X = p.int(64)
	p.lit(`},"Lineage":{"N":`)
	t.Lineage.N = uint32(p.uint(32))
	p.lit(`,"Hash":`)
	t.Lineage.Hash = p.uint(64)
	p.lit(`}}}`)
	// Only JSON's own whitespace may follow (bytes.TrimSpace would also
	// take \v, \f and Unicode spaces, which json refuses).
	return e, !p.bad && len(bytes.TrimRight(p.b, " \t\r\n")) == 0
}

// lit consumes s.
func (p *deliveryParser) lit(s string) {
	if p.bad || !bytes.HasPrefix(p.b, []byte(s)) {
		p.bad = true
		return
	}
	p.b = p.b[len(s):]
}

// host consumes a string's text and its closing quote: printable ASCII
// without escapes, which json decodes to itself.
func (p *deliveryParser) host() string {
	for i := 0; i < len(p.b) && !p.bad; i++ {
		switch c := p.b[i]; {
		case c == '"':
			h := string(p.b[:i])
			p.b = p.b[i+1:]
			return h
		case c < 0x20 || c >= 0x7f || c == '\\':
			p.bad = true
		}
	}
	p.bad = true
	return ""
}

// number consumes a JSON number token: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// the fraction and exponent only when frac; nil when the line is bad
// already or becomes bad here.
func (p *deliveryParser) number(frac bool) []byte {
	if p.bad {
		return nil
	}
	b, i := p.b, 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	if n := digits(); n == 0 || (n > 1 && b[start] == '0') {
		p.bad = true
		return nil
	}
	if frac && i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			p.bad = true
			return nil
		}
	}
	if frac && i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.bad = true
			return nil
		}
	}
	p.b = b[i:]
	return b[:i]
}

// maxShortDigits is the most digits a number can have and still not
// overflow an int64 (10^18 < 2^63).
const maxShortDigits = 18

// short reads an integer token of number(false) that has at most
// maxShortDigits digits, by hand; ok is false for a longer one.
func short(tok []byte) (v int64, neg, ok bool) {
	if len(tok) > 0 && tok[0] == '-' {
		neg, tok = true, tok[1:]
	}
	if len(tok) > maxShortDigits {
		return 0, neg, false
	}
	for _, c := range tok {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, neg, true
}

// int consumes an integer that fits in bits (as strconv.ParseInt would
// take it); anything else makes the line bad.
func (p *deliveryParser) int(bits int) int64 {
	tok := p.number(false)
	if p.bad {
		return 0
	}
	if v, _, ok := short(tok); ok {
		p.bad = bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1))
		return v
	}
	v, err := strconv.ParseInt(string(tok), 10, bits)
	p.bad = err != nil
	return v
}

// uint consumes an unsigned integer that fits in bits (as
// strconv.ParseUint would take it: no sign); anything else makes the line
// bad.
func (p *deliveryParser) uint(bits int) uint64 {
	tok := p.number(false)
	if p.bad {
		return 0
	}
	if v, neg, ok := short(tok); ok {
		p.bad = neg || bits < 64 && uint64(v) >= 1<<bits
		return uint64(v)
	}
	v, err := strconv.ParseUint(string(tok), 10, bits)
	p.bad = err != nil
	return v
}

func (p *deliveryParser) float() float64 {
	tok := p.number(true)
	if p.bad {
		return 0
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	p.bad = err != nil
	return v
}
