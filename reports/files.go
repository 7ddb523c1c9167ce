package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadResult reads a result.json.
func ReadResult(path string) (*metrics.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r metrics.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// WriteTrace writes a trace as JSON Lines.
func WriteTrace(path string, trace *ha.Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16) // a syscall per 64 KiB, not per 4
	enc := json.NewEncoder(w)
	line := make([]byte, 0, 256)
	for e := range trace.All() {
		// Deliveries, nearly every line of a long run, are written by
		// hand: encoding/json's reflection was most of the time a
		// ten-million-output run spent writing its traces.
		var ok bool
		if line, ok = appendDelivery(line[:0], &e); ok {
			if _, err := w.Write(line); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", path, err)
			}
			continue
		}
		if err := enc.Encode(&e); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// appendDelivery appends delivery event e as one line exactly as
// json.Encoder writes it, or returns b unchanged and false when e is not a
// plain delivery (another kind, another field set, a host name json would
// escape, a value json cannot encode): the encoder then writes it.
func appendDelivery(b []byte, e *ha.Event) ([]byte, bool) {
	t := e.Tuple
	if e.Kind != ha.EvDeliver || t == nil || e.Peer != "" || e.Frag != 0 || e.Epoch != 0 || e.Seq != 0 ||
		e.N != 0 || e.Note != "" || e.Stats != nil || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
		return b, false
	}
	for i := 0; i < len(e.Host); i++ {
		if c := e.Host[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, int64(e.T), 10)
	b = append(b, `,"kind":"deliver"`...)
	if e.Host != "" {
		b = append(b, `,"host":"`...)
		b = append(b, e.Host...)
		b = append(b, '"')
	}
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
	return append(b, "}}}\n"...), true
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

// ReadTrace reads a trace written by WriteTrace: one JSON event per line
// (blank lines are skipped). Deliveries in WriteTrace's own form are read
// without reflection; any other line goes through encoding/json, and an
// error names the file and the line.
func ReadTrace(path string) (*ha.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &ha.Trace{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), maxTraceLine)
	var p deliveryParser
	var t ha.Tuple
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if e, ok := p.parse(line, &t); ok {
			out.Add(e) // Add copies the tuple
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e ha.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out.Add(e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// maxTraceLine is the longest trace line read (a stats or note event is
// well under a kilobyte).
const maxTraceLine = 16 << 20

// TraceFile is the file name of a strategy's trace in an output directory.
func TraceFile(dir, strategy string) string {
	return filepath.Join(dir, "trace-"+strategy+".jsonl")
}
