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

	// The hand path takes plain deliveries only.
	_, ok := appendDelivery(nil, &evs[0])
	assert.True(t, ok, "a plain delivery")
	for _, e := range evs[len(evs)-3:] {
		_, ok := appendDelivery(nil, &e)
		assert.False(t, ok, "%s", e.Kind)
	}
	_, ok = appendDelivery(nil, &ha.Event{Kind: ha.EvDeliver, Host: "a<b", Tuple: tuple(1)})
	assert.False(t, ok, "a host json escapes")
}

// TestReadDeliveryAgreesWithJSON: whatever delivery line the hand parser
// accepts, encoding/json decodes to the same event — on the lines
// WriteTrace writes and on 200 000 random mutations of them — and it
// accepts every line WriteTrace writes for a plain delivery.
func TestReadDeliveryAgreesWithJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var p deliveryParser
	var got ha.Tuple
	accepted := 0
	for i := range 2000 {
		v := math.Float64frombits(r.Uint64())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = r.NormFloat64()
		}
		tu := ha.Tuple{Stream: uint8(r.IntN(2)), Seq: r.Uint64(), Key: r.Uint32(), Time: r.Int64() - r.Int64(),
			Emit: r.Int64N(1e12), Value: v, ID: ha.OutputID{Kind: ha.IDKind(r.IntN(3)), Key: r.Uint32(), X: -r.Int64N(9)},
			Lineage: ha.Lineage{N: r.Uint32(), Hash: r.Uint64()}}
		e := ha.Event{T: time.Duration(r.Int64N(1e12)), Kind: ha.EvDeliver, Host: []string{"sink", "", "C.1"}[i%3], Tuple: &tu}
		line, ok := appendDelivery(nil, &e)
		require.True(t, ok)
		line = line[:len(line)-1] // the newline
		pe, ok := p.parse(line, &got)
		require.True(t, ok, "%s", line)
		assert.Equal(t, e.T, pe.T)
		assert.Equal(t, e.Host, pe.Host)
		assert.Equal(t, tu, got)

		for range 100 {
			m := mutate(r, line)
			pe, ok := p.parse(m, &got)
			var je ha.Event
			err := json.Unmarshal(m, &je)
			if !ok {
				continue
			}
			accepted++
			require.NoError(t, err, "the parser took what json refuses: %s", m)
			require.NotNil(t, je.Tuple, "%s", m)
			pe.Tuple = nil
			assert.Equal(t, *je.Tuple, got, "%s", m)
			je.Tuple = nil
			require.Equal(t, je, pe, "%s", m)
		}
	}
	t.Logf("%d mutated lines accepted by both", accepted)
	assert.Positive(t, accepted)
}

// mutate changes line in one random way: a byte replaced, inserted or
// deleted, or a number token replaced by another number's text.
func mutate(r *rand.Rand, line []byte) []byte {
	m := bytes.Clone(line)
	i := r.IntN(len(m))
	alphabet := []byte(`0123456789-+.eE"{},:\ x<`)
	switch r.IntN(4) {
	case 0:
		m[i] = alphabet[r.IntN(len(alphabet))]
	case 1:
		m = append(m[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, m[i:]...)...)
	case 2:
		m = append(m[:i], m[i+1:]...)
	default:
		nums := []string{"0", "-0", "00", "1e3", "1E+3", "-1", "256", "4294967296", "18446744073709551616",
			"9223372036854775808", "1.5", "1e999", ".5", "5.", "0.0", "-"}
		j := i
		for j < len(m) && (m[j] >= '0' && m[j] <= '9' || m[j] == '-' || m[j] == '.' || m[j] == 'e' || m[j] == 'E' || m[j] == '+') {
			j++
		}
		m = append(m[:i], append([]byte(nums[r.IntN(len(nums))]), m[j:]...)...)
	}
	return m
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
