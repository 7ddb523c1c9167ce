package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestTraceLinesAreEncodingJSON: WriteTrace writes deliveries by hand
// (ha.AppendDeliveryJSON, tested on random values in ha) and every other
// event with encoding/json; the file is line for line what encoding/json
// alone writes, deliveries the hand path leaves to the encoder included.
func TestTraceLinesAreEncodingJSON(t *testing.T) {
	tuple := func(v float64) *ha.Tuple {
		return &ha.Tuple{Stream: 1, Seq: 1 << 63, Key: 7, Time: -5, Emit: 1e12, Value: v,
			ID: ha.OutputID{Kind: ha.IDWindow, Key: 3, X: -9}, Lineage: ha.Lineage{N: 4, Hash: math.MaxUint64}}
	}
	tr := ha.NewTrace(
		ha.Event{T: 1, Kind: ha.EvDeliver, Host: "sink", Tuple: tuple(0.23080400712019022)},
		ha.Event{T: 2, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 3, Kind: ha.EvDeliver, Host: "s<1>", Tuple: tuple(1e-7)},
		ha.Event{T: 4, Kind: ha.EvStats, Host: "A", Stats: &ha.NodeStats{Role: "primary", Messages: 3}},
		ha.Event{T: 5, Kind: ha.EvDeliver, Tuple: tuple(math.Copysign(0, -1))},
		ha.Event{T: 6, Kind: ha.EvDeliver, Host: "é", Tuple: tuple(1e21)},
	)
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	for e := range tr.All() {
		require.NoError(t, enc.Encode(&e))
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, WriteTrace(path, tr))
	assert.Equal(t, want.String(), readFile(t, path))
}

// TestReadTraceRoundTripAndErrors: a trace read back is the trace written,
// deliveries and other events interleaved; a damaged line is named by its
// number.
func TestReadTraceRoundTripAndErrors(t *testing.T) {
	evs := []ha.Event{
		{T: 1, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{Seq: 1, Value: 0.5, ID: ha.OutputID{X: 1}, Lineage: ha.Lineage{N: 1, Hash: 9}}},
		{T: 2, Kind: ha.EvCrash, Host: "B"},
		{T: 3, Kind: ha.EvDeliver, Host: "a<b", Tuple: &ha.Tuple{Seq: 2, Value: 1e-9}},
		{T: 4, Kind: ha.EvStats, Host: "A", Stats: &ha.NodeStats{Role: "primary", Messages: 3}},
		{T: 5, Kind: ha.EvDeliver, Tuple: &ha.Tuple{Seq: 3, Value: -2, Emit: 4}},
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, WriteTrace(path, ha.NewTrace(evs...)))
	back, err := ReadTrace(path)
	require.NoError(t, err)
	assert.Equal(t, ha.NewTrace(evs...).Slice(), back.Slice())

	b := []byte(readFile(t, path))
	lines := bytes.Split(b, []byte("\n"))
	lines[3] = []byte(`{"t":4,"kind":"stats","host":"A","stats":{"role":7}}`)
	require.NoError(t, os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o644))
	_, err = ReadTrace(path)
	require.ErrorContains(t, err, "t.jsonl:4:")
}
