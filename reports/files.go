package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
)

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	// Under a temporary name, renamed when whole: a full disk never
	// leaves a truncated result.json.
	return safefile.WriteFile(path, append(b, '\n'))
}

// ReadResult reads a result.json of at most MaxResultFile bytes and checks
// it (ValidateResult); an error names the file and the line or field.
func ReadResult(path string) (*metrics.Result, error) {
	b, err := readBounded(path, MaxResultFile)
	if err != nil {
		return nil, err
	}
	var r *metrics.Result
	if err := decodeStrict(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := ValidateResult(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteTrace writes a trace as JSON Lines, under a temporary name renamed
// to path once the whole trace is written.
func WriteTrace(path string, trace *ha.Trace) error {
	f, err := safefile.Create(path)
	if err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16) // a syscall per 64 KiB, not per 4
	ew := ha.NewEventWriter(w)
	for e := range trace.All() {
		if err := ew.Write(&e); err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// ReadTrace reads a trace written by WriteTrace: one JSON event per line
// (blank lines are skipped). Deliveries in WriteTrace's own form are read
// without reflection; any other line goes through encoding/json, and an
// error names the file and the line. Event times are range-checked
// (checkEvent); the file must be a regular one.
func ReadTrace(path string) (*ha.Trace, error) {
	f, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &ha.Trace{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), maxTraceLine)
	var scratch ha.Tuple
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := ha.UnmarshalEventLine(line, &scratch)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if err := checkEvent(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: %s event: %w", path, n, e.Kind, err)
		}
		out.Add(e) // Add copies a delivery's tuple
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
