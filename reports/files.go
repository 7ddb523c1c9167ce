package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for e := range trace.All() {
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

// ReadTrace reads a trace written by WriteTrace.
func ReadTrace(path string) (*ha.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &ha.Trace{}
	dec := json.NewDecoder(bufio.NewReader(f))
	for dec.More() {
		var e ha.Event
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out.Add(e)
	}
	return out, nil
}

// TraceFile is the file name of a strategy's trace in an output directory.
func TraceFile(dir, strategy string) string {
	return filepath.Join(dir, "trace-"+strategy+".jsonl")
}
