package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/streamha/streamha/ha"
)

// A node writes its trace to PartialTraceFile and, once the run is over
// and everything is written, appends an end record (an EvNote
// "trace end {"events": N}" counting the events before it), flushes it to
// disk and renames it to TraceFileOf. A trace under its final name is
// therefore whole; a killed node leaves its partial file, which the
// launcher and Collect read as a crashed host's trace. A node whose trace
// cannot be written exits non-zero and says so.

// traceEndNote prefixes the end record's note.
const traceEndNote = "trace end "

// PartialTraceFile is where a node writes its trace until it is whole.
func PartialTraceFile(dir, host string) string { return TraceFileOf(dir, host) + ".partial" }

// traceEnd is the end record's body.
type traceEnd struct {
	Events int64 `json:"events"`
}

// ErrIncompleteTrace is returned (wrapped) for a trace without a valid end
// record.
var ErrIncompleteTrace = errors.New("incomplete trace")

// checkTraceEnd verifies that events end with an end record counting the
// events before it, and returns them without it.
func checkTraceEnd(path string, events []ha.Event) ([]ha.Event, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("%s: %w: empty", path, ErrIncompleteTrace)
	}
	last := events[len(events)-1]
	body, ok := strings.CutPrefix(last.Note, traceEndNote)
	if last.Kind != ha.EvNote || !ok {
		return nil, fmt.Errorf("%s: %w: no end record after its %d events (the node did not finish writing it, or the file was cut)", path, ErrIncompleteTrace, len(events))
	}
	var te traceEnd
	if err := json.Unmarshal([]byte(body), &te); err != nil {
		return nil, fmt.Errorf("%s: %w: bad end record: %w", path, ErrIncompleteTrace, err)
	}
	if te.Events != int64(len(events)-1) {
		return nil, fmt.Errorf("%s: %w: the end record counts %d events, the file holds %d", path, ErrIncompleteTrace, te.Events, len(events)-1)
	}
	return events[:len(events)-1], nil
}

// readNodeTrace reads host's trace in dir: the whole one, checked against
// its end record, or else the partial file a killed node left (complete
// false). A host with neither file has no trace (nil, true, nil).
func readNodeTrace(dir, host string) (events []ha.Event, complete bool, err error) {
	final := TraceFileOf(dir, host)
	if _, err := os.Lstat(final); err == nil {
		tr, err := ReadTraceTolerant(final)
		if err != nil {
			return nil, false, err
		}
		tr, err = checkTraceEnd(final, tr)
		return tr, err == nil, err
	}
	tr, err := ReadTraceTolerant(PartialTraceFile(dir, host))
	if err != nil {
		return nil, false, err
	}
	if tr == nil {
		return nil, true, nil
	}
	return tr, false, nil
}

// finishTrace appends the end record, flushes the trace to disk and
// renames it to its final name. Any failure, now or earlier while the
// node traced, is the node's error: its run cannot be reported.
func (r *runner) finishTrace() error {
	e := r.env
	if e.tErr == nil {
		b, _ := json.Marshal(traceEnd{Events: e.nEvents})
		e.Trace(ha.Event{T: e.Now(), Kind: ha.EvNote, Host: r.opts.Host, Note: traceEndNote + string(b)})
	}
	e.finished = true
	err := e.tErr
	if err == nil {
		err = e.trace.Flush()
	}
	if err == nil {
		err = e.file.Sync()
	}
	if cerr := e.file.Close(); err == nil {
		err = cerr
	}
	e.closer = nil
	if err == nil {
		err = os.Rename(e.file.Name(), TraceFileOf(r.opts.Out, r.opts.Host))
	}
	if err != nil {
		return fmt.Errorf("node %s: trace %s: %w: the run's trace is incomplete and cannot be reported", r.opts.Host, e.file.Name(), err)
	}
	return nil
}
