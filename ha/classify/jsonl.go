package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLineBytes is the longest line ReadJSONL accepts.
const MaxLineBytes = 64 << 20

// ErrFormat is matched (with errors.Is) by every error ReadJSONL returns for
// malformed content, as opposed to read errors of the underlying reader.
var ErrFormat = errors.New("malformed output log")

// LineError is a malformed line of an output log. Its message is
// "file:line: reason", e.g. `observed.jsonl:17: missing "id"`.
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
}

// Is makes errors.Is(err, ErrFormat) true.
func (e *LineError) Is(target error) bool { return target == ErrFormat }

// ReadJSONL reads an output log in JSON Lines form, one delivered output per
// line:
//
//	{"id": "k03|w=9s", "value": 40.5, "key": "k03", "n": 1000, "t": 9012.5}
//
// "id" is a required non-empty string; "value" is any JSON value (absent
// means null); "key" an optional string; "n" an optional non-negative
// integer (the lineage count); "t" an optional delivery time in ms. A null
// optional field counts as absent. Blank lines are skipped; other fields are
// an error. The value is canonicalised (see CanonicalValue) so that 1, 1.0
// and 1e0 compare equal and objects compare independently of key order.
// Every error names the file (name) and the line, e.g.
// `observed.jsonl:3: invalid JSON: ...`; malformed content errors match
// ErrFormat.
func ReadJSONL(r io.Reader, name string) ([]Output, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Output
	var buf []byte
	for line := 1; ; line++ {
		buf = buf[:0]
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if cap(buf)-len(buf) < len(frag) {
				// Double: append grows a large slice by a quarter,
				// which allocates about five times a long line.
				buf = append(make([]byte, 0, 2*cap(buf)+len(frag)), buf...)
			}
			buf = append(buf, frag...)
			if len(buf) > MaxLineBytes {
				return out, &LineError{name, line, "line longer than " + strconv.Itoa(MaxLineBytes) + " bytes"}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return out, fmt.Errorf("%s:%d: read: %w", name, line, err)
		}
		text := buf
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
		}
		text = bytes.TrimSpace(text)
		if !utf8.Valid(text) {
			return out, &LineError{name, line, "invalid UTF-8 (ids and values are compared as written: bytes that are not UTF-8 cannot be)"}
		}
		if loneSurrogate(text) {
			return out, &LineError{name, line, `a \u escape of a lone UTF-16 surrogate (not a character)`}
		}
		if len(text) > 0 {
			o, reason := parseLine(text)
			if reason != "" {
				return out, &LineError{name, line, reason}
			}
			out = append(out, o)
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// loneSurrogate reports whether text (valid JSON or not) holds a \uXXXX
// escape of a surrogate that is not part of a pair: encoding/json turns
// every such escape into U+FFFD, so two different ids would become one.
func loneSurrogate(text []byte) bool {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(text) || text[i] != '\\' || text[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(text[i+2:i+6]), 16, 32)
		return rune(v), err == nil
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			lo, ok := hex4(i + 6)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		default:
			i += 5
		}
	}
	return false
}

// parseLine decodes one non-blank line; the reason is "" on success.
func parseLine(text []byte) (Output, string) {
	var o Output
	if text[0] != '{' {
		if !json.Valid(text) {
			return o, "invalid JSON: " + jsonErr(text)
		}
		return o, "expected a JSON object"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(text, &fields); err != nil {
		return o, "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		switch f {
		case "id", "value", "key", "n", "t":
		default:
			return o, "unknown field " + strconv.Quote(f)
		}
	}
	raw, ok := fields["id"]
	if !ok || isNull(raw) {
		return o, `missing "id"`
	}
	if err := json.Unmarshal(raw, &o.ID); err != nil {
		return o, `"id" must be a string`
	}
	if o.ID == "" {
		return o, `"id" must not be empty`
	}
	if raw, ok := fields["key"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &o.Key); err != nil {
			return o, `"key" must be a string`
		}
	}
	o.Value = "null"
	if raw, ok := fields["value"]; ok {
		v, err := CanonicalValue(raw)
		if err != nil {
			return o, `"value": ` + err.Error()
		}
		o.Value = v
	}
	if raw, ok := fields["n"]; ok && !isNull(raw) {
		n, ok := nonNegInt(raw)
		if !ok {
			return o, `"n" must be a non-negative integer`
		}
		o.N, o.HasN = n, true
	}
	if raw, ok := fields["t"]; ok && !isNull(raw) {
		num, ok := number(raw)
		if !ok {
			return o, `"t" must be a number (ms)`
		}
		t, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(t, 0) || math.IsNaN(t) {
			return o, `"t" must be a finite number (ms)`
		}
		o.T, o.HasT = t, true
	}
	return o, ""
}

// jsonErr is the syntax error of invalid JSON text, without the "json: " prefix.
func jsonErr(text []byte) string {
	var v any
	if err := json.Unmarshal(text, &v); err != nil {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	return "not valid JSON"
}

// number returns the text of a JSON number literal (json.Number alone would
// also accept a quoted number).
func number(raw json.RawMessage) (json.Number, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' {
		return "", false
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err != nil {
		return "", false
	}
	return num, true
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// nonNegInt decodes a JSON number that is a non-negative integer (1000,
// 1e3 or 1000.0), at most 2^63-1.
func nonNegInt(raw json.RawMessage) (int64, bool) {
	num, ok := number(raw)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return n, n >= 0
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// CanonicalValue returns the canonical text of a JSON value, compared
// exactly as written: a number is written from its decimal text (never
// through float64, so 9007199254740993 and 9007199254740992 differ) in the
// form CanonicalFloat gives the same value (1, 1.0 and 1e0 are all "1",
// 0.5 and 5e-1 "0.5", -0 is "0"); strings are JSON-quoted; objects are
// written with their keys sorted and arrays element by element, all
// without spaces. It scans the bytes once after checking them: its
// memory is a small multiple of the value's size, whatever the value holds.
func CanonicalValue(raw []byte) (string, error) {
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		if err == nil {
			err = errors.New("not valid JSON")
		}
		return "", fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	c := canonicalizer{raw: raw, out: make([]byte, 0, len(raw))}
	if err := c.value(); err != nil {
		return "", err
	}
	return string(c.out), nil
}

// canonicalizer writes the canonical form of valid JSON text.
type canonicalizer struct {
	raw []byte
	i   int
	out []byte
}

func (c *canonicalizer) space() {
	for c.i < len(c.raw) && (c.raw[c.i] == ' ' || c.raw[c.i] == '\t' || c.raw[c.i] == '\n' || c.raw[c.i] == '\r') {
		c.i++
	}
}

// value writes the value at c.i (the text is valid JSON).
func (c *canonicalizer) value() error {
	c.space()
	switch b := c.raw[c.i]; {
	case b == 'n':
		c.out = append(c.out, "null"...)
		c.i += 4
	case b == 't':
		c.out = append(c.out, "true"...)
		c.i += 4
	case b == 'f':
		c.out = append(c.out, "false"...)
		c.i += 5
	case b == '"':
		s, err := c.str()
		if err != nil {
			return err
		}
		c.out = appendString(c.out, s)
	case b == '[':
		c.i++
		c.out = append(c.out, '[')
		for n := 0; ; n++ {
			c.space()
			if c.raw[c.i] == ']' {
				c.i++
				break
			}
			if c.raw[c.i] == ',' {
				c.i++
			}
			if n > 0 {
				c.out = append(c.out, ',')
			}
			if err := c.value(); err != nil {
				return err
			}
		}
		c.out = append(c.out, ']')
	case b == '{':
		return c.object()
	default:
		j := c.i
		for j < len(c.raw) && strings.IndexByte("+-.eE0123456789", c.raw[j]) >= 0 {
			j++
		}
		var err error
		if c.out, err = appendNumber(c.out, c.raw[c.i:j]); err != nil {
			return err
		}
		c.i = j
	}
	return nil
}

// str returns the string at c.i, unquoted, and moves past it.
func (c *canonicalizer) str() ([]byte, error) {
	j := c.i + 1
	plain := true
	for c.raw[j] != '"' {
		if c.raw[j] == '\\' {
			plain = false
			j++
		}
		j++
	}
	lit := c.raw[c.i : j+1]
	c.i = j + 1
	if plain {
		return lit[1 : len(lit)-1], nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return []byte(s), nil
}

// object writes the object at c.i with its members sorted by key.
func (c *canonicalizer) object() error {
	type member struct {
		key  string
		text []byte
	}
	var ms []member
	c.i++
	for {
		c.space()
		if c.raw[c.i] == '}' {
			c.i++
			break
		}
		if c.raw[c.i] == ',' {
			c.i++
			c.space()
		}
		k, err := c.str()
		if err != nil {
			return err
		}
		c.space()
		c.i++ // ':'
		start := len(c.out)
		if err := c.value(); err != nil {
			return err
		}
		ms = append(ms, member{string(k), bytes.Clone(c.out[start:])})
		c.out = c.out[:start]
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	c.out = append(c.out, '{')
	for i, m := range ms {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = appendString(c.out, []byte(m.key))
		c.out = append(c.out, ':')
		c.out = append(c.out, m.text...)
	}
	c.out = append(c.out, '}')
	return nil
}

// maxExponent bounds the decimal exponent of a number value: beyond it a
// value is refused rather than compared through an overflowing exponent.
const maxExponent = 1 << 20

// appendNumber appends a JSON number literal exactly: its significant
// digits and decimal exponent, laid out as strconv.FormatFloat(f, 'g', -1,
// 64) lays out the shortest digits of a float (plain from 1e-4 up to but
// not including 1e6, else d.ddde±XX), so that a literal holding exactly the
// shortest digits of a float64 gives CanonicalFloat of that float.
func appendNumber(dst, lit []byte) ([]byte, error) {
	neg := len(lit) > 0 && lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	mant, expText := lit, []byte(nil)
	if k := bytes.IndexAny(lit, "eE"); k >= 0 {
		mant, expText = lit[:k], lit[k+1:]
	}
	exp := 0
	if expText != nil {
		sign := 1
		if len(expText) > 0 && (expText[0] == '+' || expText[0] == '-') {
			if expText[0] == '-' {
				sign = -1
			}
			expText = expText[1:]
		}
		for _, d := range expText {
			exp = exp*10 + int(d-'0')
			if exp > maxExponent {
				return dst, fmt.Errorf("number %.40s: exponent out of range", lit)
			}
		}
		exp *= sign
	}
	intPart, frac := mant, []byte(nil)
	if k := bytes.IndexByte(mant, '.'); k >= 0 {
		intPart, frac = mant[:k], mant[k+1:]
	}
	// value = 0.(intPart frac) × 10^dp, digits taken without copying.
	digit := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	n := len(intPart) + len(frac)
	dp := len(intPart) + exp
	lo, hi := 0, n
	for lo < hi && digit(lo) == '0' {
		lo++
		dp--
	}
	for hi > lo && digit(hi-1) == '0' {
		hi--
	}
	if lo == hi {
		return append(dst, '0'), nil
	}
	if neg {
		dst = append(dst, '-')
	}
	nd := hi - lo
	// The same choice as strconv's %g with the shortest precision.
	if x := dp - 1; x < -4 || x >= 6 {
		dst = append(dst, digit(lo))
		if nd > 1 {
			dst = append(dst, '.')
			for k := lo + 1; k < hi; k++ {
				dst = append(dst, digit(k))
			}
		}
		dst = append(dst, 'e')
		if x < 0 {
			dst = append(dst, '-')
			x = -x
		} else {
			dst = append(dst, '+')
		}
		if x < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(x), 10), nil
	}
	switch {
	case dp <= 0:
		dst = append(dst, "0."...)
		for range -dp {
			dst = append(dst, '0')
		}
		for k := lo; k < hi; k++ {
			dst = append(dst, digit(k))
		}
	case dp >= nd:
		for k := lo; k < hi; k++ {
			dst = append(dst, digit(k))
		}
		for range dp - nd {
			dst = append(dst, '0')
		}
	default:
		for k := lo; k < hi; k++ {
			if k-lo == dp {
				dst = append(dst, '.')
			}
			dst = append(dst, digit(k))
		}
	}
	return dst, nil
}

// canonicalNumber is appendNumber on a string.
func canonicalNumber(lit string) (string, error) {
	b, err := appendNumber(nil, []byte(lit))
	return string(b), err
}

// CanonicalFloat is the canonical text of a number value, the same as
// CanonicalValue gives for a JSON number: the shortest 'g' formatting, with
// -0 written as "0". Producers of in-process logs should use it for numeric
// values so that their logs compare equal with logs read by ReadJSONL.
func CanonicalFloat(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// appendString appends s as a JSON string, escaped as json.Marshal
// escapes it (a string of plain characters is copied as is).
func appendString(dst, s []byte) []byte {
	plain := true
	for _, b := range s {
		if b < 0x20 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' || b >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	q, _ := json.Marshal(string(s)) // a string always marshals
	return append(dst, q...)
}
