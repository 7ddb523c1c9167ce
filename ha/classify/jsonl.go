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

// CanonicalValue returns the canonical text of a JSON value: numbers are
// formatted as the shortest text of their float64 value (so 1, 1.0 and 1e0
// are all "1", and -0 is "0"), strings are JSON-quoted, objects are written
// with their keys sorted and arrays element by element, all without spaces.
func CanonicalValue(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", errors.New("invalid JSON: data after the value")
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String(), nil
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

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil { // out of float64 range: keep the literal
			b.WriteString(string(x))
			return
		}
		b.WriteString(CanonicalFloat(f))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	}
}

// writeString writes s as a JSON string.
func writeString(b *strings.Builder, s string) {
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}
