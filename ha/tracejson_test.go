package ha_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestAppendDeliveryJSONIsEncodingJSON: every line AppendDeliveryJSON
// writes is byte for byte what encoding/json writes, for edge values
// (exponent notation at both ends, -0, the largest integers) and random
// tuples; events it cannot write exactly (other kinds, extra fields, host
// names json escapes, values json refuses) are left to the encoder.
func TestAppendDeliveryJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99999e-7, 1e-7, 1.5e-9, 1e20, 1e21, 123456789e13,
		-1e-300, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0.23080400712019022, 1e-10, 5e-324}
	for range 3000 {
		values = append(values, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	written := 0
	for i, v := range values {
		host := []string{"sink", "B.1", "", "s<1>", "a&b", "é", "q\"", "tab\t"}[i%8]
		e := ha.Event{T: time.Duration(r.Int64N(1e12)) - 5e11, Kind: ha.EvDeliver, Host: host, Tuple: &ha.Tuple{
			Stream: uint8(r.IntN(2)), Seq: r.Uint64(), Key: r.Uint32(), Time: r.Int64() - r.Int64(), Emit: -r.Int64N(1e12),
			Value: v, ID: ha.OutputID{Kind: ha.IDKind(r.IntN(3)), Key: r.Uint32(), X: r.Int64() - r.Int64()},
			Lineage: ha.Lineage{N: r.Uint32(), Hash: math.MaxUint64 - r.Uint64N(3)}}}
		got, ok := ha.AppendDeliveryJSON([]byte("prefix"), &e)
		want, err := json.Marshal(&e)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			require.False(t, ok, "%v", v)
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		plain := host == "sink" || host == "B.1" || host == ""
		require.Equal(t, plain, ok, "host %q", host)
		if ok {
			require.Equal(t, "prefix"+string(want)+"\n", string(got))
			written++
		} else {
			require.Equal(t, "prefix", string(got), "nothing appended")
		}
	}
	assert.Greater(t, written, 2000)
	// AppendEventJSON writes every field of Event and AppendDeliveryJSON
	// checks that all but the delivery's own are empty: a new field must
	// be added there too.
	var fields []string
	for f := range reflect.TypeFor[ha.Event]().Fields() {
		fields = append(fields, f.Name)
	}
	assert.Equal(t, []string{"T", "Kind", "Host", "Peer", "Frag", "Epoch", "Seq", "N", "Note", "Tuple", "Stats"}, fields,
		"Event changed: update AppendEventJSON and ParseDeliveryJSON")
	for _, e := range []ha.Event{
		{T: 5, Kind: ha.EvCrash, Host: "B"},
		{T: 6, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{}, Note: "x"},
		{T: 6, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{}, Seq: 1},
		{T: 6, Kind: ha.EvDeliver, Host: "sink"},
		{T: 7, Kind: ha.EvStats, Host: "A", Stats: &ha.NodeStats{Role: "primary", Messages: 3}},
	} {
		_, ok := ha.AppendDeliveryJSON(nil, &e)
		assert.False(t, ok, "%+v", e)
	}
}

// TestAppendEventJSONIsEncodingJSON: for events of every kind with any
// mix of fields, AppendEventJSON writes byte for byte what encoding/json
// writes, or — exactly when a string needs escaping, a value json refuses
// or Stats is set — nothing, leaving the event to the encoder.
func TestAppendEventJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	kinds := []ha.EventKind{ha.EvDeliver, ha.EvEmit, ha.EvCrash, ha.EvDetect, ha.EvTakeover, ha.EvRoute, ha.EvFenced,
		ha.EvCheckpointBeg, ha.EvReplayStart, ha.EvTrim, ha.EvGap, ha.EvStats, ha.EvNote, "odd\"kind"}
	strs := []string{"", "", "B", "sink", "A.1", "upstream-backup: window results starting at or before 1.2s are incomplete",
		"a<b", "x&y", "q\"", "back\\slash", "tab\t", "é", "\u2028", "\xff"}
	plain := func(s string) bool { return !strings.ContainsAny(s, "<&\"\\\té\u2028\xff") }
	written := 0
	for range 20000 {
		e := ha.Event{T: time.Duration(r.Int64N(1e12) - 1e9), Kind: kinds[r.IntN(len(kinds))],
			Host: strs[r.IntN(len(strs))], Peer: strs[r.IntN(len(strs))], Note: strs[r.IntN(len(strs))]}
		if r.IntN(2) == 0 {
			e.Frag = r.IntN(5) - 1
		}
		if r.IntN(2) == 0 {
			e.Epoch = r.Uint64() >> r.IntN(64)
		}
		if r.IntN(2) == 0 {
			e.Seq = r.Uint64() >> r.IntN(64)
		}
		if r.IntN(2) == 0 {
			e.N = r.Int64() - r.Int64()
		}
		if r.IntN(3) == 0 {
			v := []float64{r.NormFloat64(), 1e-7, 1e21, math.NaN(), math.Inf(-1)}[r.IntN(5)]
			e.Tuple = &ha.Tuple{Stream: uint8(r.IntN(2)), Seq: r.Uint64(), Key: r.Uint32(), Time: r.Int64(),
				Emit: -r.Int64N(1e12), Value: v, ID: ha.OutputID{Kind: ha.IDKind(r.IntN(3)), X: r.Int64()},
				Lineage: ha.Lineage{N: r.Uint32(), Hash: r.Uint64()}}
		}
		if r.IntN(20) == 0 {
			e.Stats = &ha.NodeStats{Role: "primary", Messages: r.Int64N(100)}
		}
		got, ok := ha.AppendEventJSON([]byte("prefix"), &e)
		finite := e.Tuple == nil || !math.IsNaN(e.Tuple.Value) && !math.IsInf(e.Tuple.Value, 0)
		want := plain(string(e.Kind)) && plain(e.Host) && plain(e.Peer) && plain(e.Note) && e.Stats == nil && finite
		require.Equal(t, want, ok, "%+v", e)
		if !ok {
			require.Equal(t, "prefix", string(got), "nothing appended")
			continue
		}
		var enc bytes.Buffer
		require.NoError(t, json.NewEncoder(&enc).Encode(&e))
		require.Equal(t, "prefix"+enc.String(), string(got))
		written++
	}
	assert.Greater(t, written, 1000)
}

// TestParseDeliveryAgreesWithJSON: whatever delivery line the hand parser
// accepts, encoding/json decodes to the same event — on the lines
// WriteTrace writes and on 200 000 random mutations of them — and it
// accepts every line WriteTrace writes for a plain delivery.
func TestParseDeliveryAgreesWithJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
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
		line, ok := ha.AppendDeliveryJSON(nil, &e)
		require.True(t, ok)
		line = line[:len(line)-1] // the newline
		pe, ok := ha.ParseDeliveryJSON(line, &got)
		require.True(t, ok, "%s", line)
		assert.Equal(t, e.T, pe.T)
		assert.Equal(t, e.Host, pe.Host)
		assert.Equal(t, tu, got)

		for range 100 {
			m := mutate(r, line)
			pe, ok := ha.ParseDeliveryJSON(m, &got)
			if !ok {
				continue // only what the parser accepts must agree with json
			}
			var je ha.Event
			err := json.Unmarshal(m, &je)
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
// TestParseDeliveryIntegerEdges: integers at the edges of every field's
// range, and of the parser's own short path (18 digits), are taken or
// refused exactly as encoding/json takes or refuses them.
func TestParseDeliveryIntegerEdges(t *testing.T) {
	line := `{"t":7,"kind":"deliver","tuple":{"Stream":1,"Seq":2,"Key":3,"Time":4,"Emit":5,"Value":0.5,` +
		`"ID":{"Kind":1,"Key":6,"X":8},"Lineage":{"N":9,"Hash":10}}}`
	fields := []string{`"t":`, `"Stream":`, `"Seq":`, `"Key":`, `"Time":`, `"Emit":`, `"Kind":`, `"X":`, `"N":`, `"Hash":`}
	tokens := []string{"0", "-0", "-1", "127", "128", "255", "256", "65535", "2147483647", "2147483648",
		"4294967295", "4294967296", "-2147483648", "-2147483649", "999999999999999999", "-999999999999999999",
		"1000000000000000000", "-1000000000000000000", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "00", "-"}
	for _, f := range fields {
		for _, tok := range tokens {
			at := bytes.Index([]byte(line), []byte(f)) + len(f)
			end := at + bytes.IndexAny([]byte(line[at:]), ",}")
			m := []byte(line[:at] + tok + line[end:])
			var got ha.Tuple
			pe, ok := ha.ParseDeliveryJSON(m, &got)
			var je ha.Event
			err := json.Unmarshal(m, &je)
			require.Equal(t, err == nil, ok, "%s%s: parser and encoding/json disagree (json: %v)", f, tok, err)
			if ok {
				assert.Equal(t, *je.Tuple, got, "%s%s", f, tok)
				assert.Equal(t, je.T, pe.T, "%s%s", f, tok)
			}
		}
	}
}

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

// FuzzParseDeliveryJSON: on any line the parser never panics, and what it
// accepts encoding/json decodes to the same event.
func FuzzParseDeliveryJSON(f *testing.F) {
	e := ha.Event{T: 1125000, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{Seq: 1, Time: 50000, Emit: 50000,
		Value: 0.23080400712019022, ID: ha.OutputID{X: 1}, Lineage: ha.Lineage{N: 1, Hash: 6238072747940578789}}}
	line, _ := ha.AppendDeliveryJSON(nil, &e)
	f.Add(line[:len(line)-1])
	f.Add([]byte(`{"t":-0,"kind":"deliver","tuple":{"Stream":0,"Seq":0,"Key":0,"Time":0,"Emit":0,"Value":1E+3,"ID":{"Kind":0,"Key":0,"X":0},"Lineage":{"N":0,"Hash":0}}}`))
	f.Add([]byte(`{"t":1,"kind":"crash","host":"B"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var got ha.Tuple
		pe, ok := ha.ParseDeliveryJSON(line, &got)
		if !ok {
			return
		}
		var je ha.Event
		require.NoError(t, json.Unmarshal(line, &je), "the parser took what json refuses: %q", line)
		require.NotNil(t, je.Tuple)
		require.Equal(t, *je.Tuple, got)
		pe.Tuple, je.Tuple = nil, nil
		require.Equal(t, je, pe)
	})
}
