package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestTraceLinesAreEncodingJSON: WriteTrace writes deliveries by hand;
// every line must be byte for byte what encoding/json writes, for edge
// values (exponent notation at both ends, -0, the largest integers),
// random tuples, and events the hand path leaves to the encoder (other
// kinds, extra fields, host names json escapes).
func TestTraceLinesAreEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tuple := func(v float64) *ha.Tuple {
		return &ha.Tuple{Stream: uint8(r.IntN(2)), Seq: r.Uint64(), Key: r.Uint32(), Time: r.Int64() - r.Int64(),
			Emit: -r.Int64N(1e12), Value: v, ID: ha.OutputID{Kind: ha.IDKind(r.IntN(3)), Key: r.Uint32(), X: r.Int64() - r.Int64()},
			Lineage: ha.Lineage{N: r.Uint32(), Hash: math.MaxUint64 - r.Uint64N(3)}}
	}
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99999e-7, 1e-7, 1.5e-9, 1e20, 1e21, 123456789e13,
		-1e-300, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0.23080400712019022, 1e-10, 5e-324}
	for range 3000 {
		values = append(values, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	var evs []ha.Event
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		host := []string{"sink", "B.1", "", "s<1>", "a&b", "é", "q\"", "tab\t"}[i%8]
		evs = append(evs, ha.Event{T: time.Duration(r.Int64N(1e12)), Kind: ha.EvDeliver, Host: host, Tuple: tuple(v)})
	}
	evs = append(evs,
		ha.Event{T: 5, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 6, Kind: ha.EvDeliver, Host: "sink", Tuple: tuple(2), Note: "x"},
		ha.Event{T: 7, Kind: ha.EvStats, Host: "A", Stats: &ha.NodeStats{Role: "primary", Messages: 3}})

	tr := ha.NewTrace(evs...)
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	for e := range tr.All() {
		require.NoError(t, enc.Encode(&e))
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, WriteTrace(path, tr))
	got := []byte(readFile(t, path))
	wl, gl := bytes.Split(want.Bytes(), []byte("\n")), bytes.Split(got, []byte("\n"))
	require.Len(t, gl, len(wl))
	for i := range wl {
		require.Equal(t, string(wl[i]), string(gl[i]), "line %d", i+1)
	}
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
