package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
	"github.com/streamha/streamha/strategies"
)

// Bounds of what the report readers accept: a saved directory may be
// damaged or hostile, and a report must then be an error naming the file,
// the line and the field — never a panic, a read without end or an empty
// report (docs/reports.md, "Reading a saved directory").
const (
	// MaxResultFile bounds result.json and sweep.json, in bytes.
	MaxResultFile = 64 << 20
	// MaxPointsFile bounds points.jsonl, in bytes.
	MaxPointsFile = 1 << 30
	// MaxTraceTime bounds an event's time: the longest run an experiment
	// may describe (experiment.LargeLimits: 1000 h of duration and of drain).
	MaxTraceTime = 2000 * time.Hour
	// MaxFigure bounds the magnitude of a figure (a time in ms, a count,
	// a ratio): beyond it a value is damage, not a measurement.
	MaxFigure = 1e15
)

// checkStrategyName checks a strategy name read from a file against the
// strategy-name alphabet (strategies.ValidName): strategy names become
// file names (trace-<strategy>.jsonl, figures), so no '/', '.' or space.
func checkStrategyName(field, s string) error {
	if !strategies.ValidName(s) {
		return fmt.Errorf("%s: %.80q is not a strategy name (lower-case letters, digits, '-' and '_', at most %d bytes)", field, s, strategies.MaxNameLen)
	}
	return nil
}

// openTrace opens a trace for reading if it is a regular file of at most
// safefile.MaxTraceFile bytes (a symbolic link to /dev/zero or a pipe is
// refused without blocking).
func openTrace(path string) (*safefile.File, error) {
	return safefile.Open(path, safefile.MaxTraceFile)
}

// readBounded reads a regular file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) { return safefile.ReadFile(path, max) }

// decodeStrict decodes one JSON value of b into v: unknown fields are
// allowed (files of newer versions), anything after the value is not, and
// a syntax or type error names its line.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("line %d: %w", lineAt(b, se.Offset), err)
		case errors.As(err, &te):
			return fmt.Errorf("line %d: %s: want %s, got %s", lineAt(b, te.Offset), te.Field, te.Type, te.Value)
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("line %d: data after the JSON value", lineAt(b, dec.InputOffset()))
	}
	return nil
}

func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte{'\n'})
}

// figure checks one number of a result.
func figure(field string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > MaxFigure {
		return fmt.Errorf("%s: %g is out of range (0 to %g)", field, x, float64(MaxFigure))
	}
	return nil
}

// figureP checks an optional number.
func figureP(field string, x *float64) error {
	if x == nil {
		return nil
	}
	return figure(field, *x)
}

// counts checks non-negative counts.
func counts(prefix string, fields map[string]int64) error {
	for name, n := range fields {
		if n < 0 || float64(n) > MaxFigure {
			return fmt.Errorf("%s.%s: %d is out of range (0 to %g)", prefix, name, n, float64(MaxFigure))
		}
	}
	return nil
}

// ValidateResult checks a result read from a file: it holds runs, each of
// a distinct strategy whose name is in the strategy-name alphabet, and
// every figure is a finite number in range. Errors name the field, e.g.
// "runs[1].recovery.recovery_ms: 1e+300 is out of range".
func ValidateResult(r *metrics.Result) error {
	if r == nil {
		return errors.New("no result (the file holds null)")
	}
	if len(r.Runs) == 0 {
		return errors.New("runs: no run in the result")
	}
	if err := checkOverhead("baseline", r.Baseline); err != nil {
		return err
	}
	seen := map[string]int{}
	for i, run := range r.Runs {
		p := fmt.Sprintf("runs[%d]", i)
		if err := checkStrategyName(p+".strategy", run.Strategy); err != nil {
			return err
		}
		if j, dup := seen[run.Strategy]; dup {
			return fmt.Errorf("%s.strategy: %s appears twice (also runs[%d])", p, run.Strategy, j)
		}
		seen[run.Strategy] = i
		rc := run.Recovery
		if err := counts(p+".recovery", map[string]int64{
			"missing": int64(rc.Missing), "duplicates": int64(rc.Duplicates), "wrong": int64(rc.Wrong),
			"spurious": int64(rc.Spurious), "lost_inputs": rc.LostInputs, "delivered": int64(rc.Delivered),
			"expected": int64(rc.Expected),
		}); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			x    *float64
		}{
			{"converged_at_ms", rc.ConvergedAtMs}, {"detection_ms", rc.DetectionMs}, {"recovery_ms", rc.RecoveryMs},
			{"max_added_latency_ms", &rc.MaxAddedLatencyMs}, {"unavailable_ms", &rc.UnavailableMs},
		} {
			if err := figureP(p+".recovery."+f.name, f.x); err != nil {
				return err
			}
		}
		if err := checkOverhead(p+".overhead", run.Overhead); err != nil {
			return err
		}
		for k, v := range run.Model {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxFigure {
				return fmt.Errorf("%s.model.%.80s: %g is out of range", p, k, v)
			}
		}
	}
	return nil
}

func checkOverhead(p string, o metrics.Overhead) error {
	if err := counts(p, map[string]int64{
		"messages": o.Messages, "bytes": o.Bytes, "peak_queue": o.PeakQueue,
		"peak_queue_bytes": o.PeakQueueBytes, "checkpoint_bytes": o.CheckpointBytes, "rounds": int64(o.Rounds),
	}); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		x    *float64
	}{
		{"cpu", &o.CPUMs}, {"process_cpu_ms", &o.ProcessCPUMs}, {"latency_p50_ms", &o.LatencyP50Ms},
		{"latency_p99_ms", &o.LatencyP99Ms}, {"messages_ratio", o.MessagesRatio}, {"bytes_ratio", o.BytesRatio},
		{"cpu_ratio", o.CPURatio}, {"process_cpu_ratio", o.ProcessCPURatio}, {"peak_queue_ratio", o.PeakQueueRatio},
	} {
		if err := figureP(p+"."+f.name, f.x); err != nil {
			return err
		}
	}
	for _, rg := range []struct {
		name string
		r    *metrics.Range
	}{{"cpu_ratio_range", o.CPURatioRange}, {"process_cpu_ratio_range", o.ProcessCPURatioRange}} {
		if rg.r == nil {
			continue
		}
		if err := figure(p+"."+rg.name+".min", rg.r.Min); err != nil {
			return err
		}
		if err := figure(p+"."+rg.name+".max", rg.r.Max); err != nil {
			return err
		}
	}
	for i, n := range o.Nodes {
		np := fmt.Sprintf("%s.nodes[%d]", p, i)
		if err := counts(np, map[string]int64{"messages": n.Messages, "bytes": n.Bytes, "peak_queue": n.PeakQueue,
			"peak_queue_bytes": n.PeakQueueBytes, "checkpoint_bytes": n.CheckpointBytes}); err != nil {
			return err
		}
		if err := figure(np+".cpu_ms", n.CPUMs); err != nil {
			return err
		}
		if err := figure(np+".process_cpu_ms", n.ProcessCPUMs); err != nil {
			return err
		}
	}
	return nil
}

// checkEvent checks the times of one trace event read from a file: the
// figures index arrays by them.
func checkEvent(e *ha.Event) error {
	if e.T < 0 || e.T > MaxTraceTime {
		return fmt.Errorf("t: %d ns is out of range (0 to %s)", int64(e.T), MaxTraceTime)
	}
	if t := e.Tuple; t != nil {
		if t.Time < 0 || t.Time > int64(MaxTraceTime) {
			return fmt.Errorf("tuple.time: %d ns is out of range (0 to %s)", int64(t.Time), MaxTraceTime)
		}
		if t.Emit < 0 || t.Emit > int64(MaxTraceTime) {
			return fmt.Errorf("tuple.emit: %d ns is out of range (0 to %s)", int64(t.Emit), MaxTraceTime)
		}
		if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) {
			return fmt.Errorf("tuple.value: %g is not a finite number", t.Value)
		}
	}
	return nil
}
