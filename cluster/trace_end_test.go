package cluster

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// TestNodeWhoseTraceFailsReportsIt: a node whose trace cannot be written
// returns an error saying the trace is incomplete, and leaves no file
// under the final name (only the partial one).
func TestNodeWhoseTraceFailsReportsIt(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(PartialTraceFile(dir, "sink"))
	require.NoError(t, err)
	require.NoError(t, f.Close()) // every write and flush now fails
	r := &runner{opts: NodeOptions{Out: dir, Host: "sink"}, log: log.New(io.Discard, "", 0)}
	r.env = &clusterEnv{r: r, base: time.Now(), file: f, trace: bufio.NewWriter(f)}
	r.env.events = ha.NewEventWriter(r.env.trace)
	r.env.Trace(ha.Event{Kind: ha.EvNote, Host: "sink", Note: "x"})
	err = r.finishTrace()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "incomplete")
	assert.NoFileExists(t, TraceFileOf(dir, "sink"))
}

// TestCollectRefusesACutTrace: the sink's trace of a precise run cut in
// half (no end record, or an end record that counts more events than the
// file holds) is refused, not classified as a gap; the same trace whole is
// read without its end record.
func TestCollectRefusesACutTrace(t *testing.T) {
	e, err := experiment.Parse([]byte(`name: cut
duration: 1s
drain: 200ms
source: {rate: 100, keys: 2}
nodes:
  - {name: C, ops: [{map: {scale: 1}}]}
`), "cut.yaml")
	require.NoError(t, err)
	ref, err := sim.ReferenceTrace(e)
	require.NoError(t, err)
	var buf bytes.Buffer
	w := ha.NewEventWriter(&buf)
	for ev := range ref.All() {
		if ev.Kind == ha.EvDeliver {
			ev.Host = "sink"
			require.NoError(t, w.Write(&ev))
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Greater(t, len(lines), 4)
	end := func(n int) string {
		return `{"t":0,"kind":"note","host":"sink","note":"trace end {\"events\": ` + strconv.Itoa(n) + `}"}`
	}
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"whole", strings.Join(lines, "\n") + "\n" + end(len(lines)) + "\n", true},
		{"cut in half", strings.Join(lines[:len(lines)/2], "\n") + "\n", false},
		{"cut after its end record was forged", strings.Join(lines[:len(lines)/2], "\n") + "\n" + end(len(lines)) + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "sink.trace.jsonl"), []byte(tc.body), 0o644))
			cmp, err := Collect(e, "none", dir, sim.ReferenceTrace)
			if !tc.ok {
				require.ErrorIs(t, err, ErrIncompleteTrace)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "precise", cmp.Result.Runs[0].Recovery.Type)
		})
	}
}
