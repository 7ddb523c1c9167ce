package reports

import (
	"bytes"
	"strconv"
	"time"

	"github.com/streamha/streamha/ha"
)

// deliveryParser reads one delivery line in exactly the form
// appendDelivery writes, without reflection. Anything else — another
// kind, other fields or order, escapes in the host, a number json would
// not accept or that does not fit its field — is not its to judge: parse
// reports false and the caller hands the line to encoding/json, which
// decodes it or names the error. What parse accepts, json decodes to the
// same event (TestReadDeliveryAgreesWithJSON).
type deliveryParser struct {
	b   []byte
	bad bool
}

// parse returns the delivery of line, its tuple stored in *t.
func (p *deliveryParser) parse(line []byte, t *ha.Tuple) (ha.Event, bool) {
	p.b, p.bad = line, false
	e := ha.Event{Kind: ha.EvDeliver, Tuple: t}
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
	t.ID.Kind = ha.IDKind(p.uint(8))
	p.lit(`,"Key":`)
	t.ID.Key = uint32(p.uint(32))
	p.lit(`,"X":`)
	t.ID.X = p.int(64)
	p.lit(`},"Lineage":{"N":`)
	t.Lineage.N = uint32(p.uint(32))
	p.lit(`,"Hash":`)
	t.Lineage.Hash = p.uint(64)
	p.lit(`}}}`)
	return e, !p.bad && len(bytes.TrimSpace(p.b)) == 0
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
// the fraction and exponent only when frac.
func (p *deliveryParser) number(frac bool) []byte {
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

func (p *deliveryParser) int(bits int) int64 {
	if p.bad {
		return 0
	}
	v, err := strconv.ParseInt(string(p.number(false)), 10, bits)
	p.bad = p.bad || err != nil
	return v
}

func (p *deliveryParser) uint(bits int) uint64 {
	if p.bad {
		return 0
	}
	v, err := strconv.ParseUint(string(p.number(false)), 10, bits)
	p.bad = p.bad || err != nil
	return v
}

func (p *deliveryParser) float() float64 {
	if p.bad {
		return 0
	}
	v, err := strconv.ParseFloat(string(p.number(true)), 64)
	p.bad = p.bad || err != nil
	return v
}
