package classify

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readLines(t *testing.T, s string) ([]Output, error) {
	t.Helper()
	return ReadJSONL(strings.NewReader(s), "log.jsonl")
}

// TestHostileLogs holds the classify cases of issue 26 as regressions.
func TestHostileLogs(t *testing.T) {
	t.Run("integers beyond 2^53 compare as written", func(t *testing.T) {
		exp, err := readLines(t, `{"id": "a", "value": 9007199254740993}`+"\n")
		require.NoError(t, err)
		obs, err := readLines(t, `{"id": "a", "value": 9007199254740992}`+"\n")
		require.NoError(t, err)
		r := Classify(exp, obs, nil)
		assert.NotEqual(t, TypePrecise, r.Type, "the float64 rounding made these equal")
		assert.Equal(t, 1, r.Wrong)
		same, err := readLines(t, `{"id": "a", "value": 9.007199254740993e15}`+"\n")
		require.NoError(t, err)
		assert.Equal(t, TypePrecise, Classify(exp, same, nil).Type, "one value, two spellings")
	})
	for _, tc := range []struct {
		name, log, want string
	}{
		{"invalid UTF-8 in an id", `{"id": "a", "value": 1}` + "\n" + "{\"id\": \"a\xff\", \"value\": 1}\n", "log.jsonl:2: invalid UTF-8"},
		{"invalid UTF-8 in a value", "{\"id\": \"a\", \"value\": \"\xfe\"}\n", "log.jsonl:1: invalid UTF-8"},
		{"a lone surrogate escape", `{"id": "a\udcff", "value": 1}` + "\n", `log.jsonl:1: a \u escape of a lone UTF-16 surrogate`},
		{"a high surrogate without its pair", `{"id": "a\ud800x", "value": 1}` + "\n", "log.jsonl:1: a \\u escape"},
		{"an exponent out of range", `{"id": "a", "value": 1e99999999999}` + "\n", "exponent out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readLines(t, tc.log)
			require.ErrorIs(t, err, ErrFormat)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("a surrogate pair is a character", func(t *testing.T) {
		o, err := readLines(t, `{"id": "\ud83d\ude00", "value": "\\udc00"}`+"\n")
		require.NoError(t, err)
		assert.Equal(t, "😀", o[0].ID)
	})
	t.Run("distinct invalid bytes are no longer one id", func(t *testing.T) {
		_, err := readLines(t, "{\"id\": \"a\xfe\"}\n")
		require.Error(t, err, "a\\xfe and a\\xff used to be read as the same id a\uFFFD")
	})
	t.Run("explanations quote at most 80 bytes of a value", func(t *testing.T) {
		long := strings.Repeat("7", 10000)
		exp := []Output{{ID: "a", Value: long}}
		obs := []Output{{ID: "a", Value: long + "8"}}
		r := Classify(exp, obs, nil)
		require.NotEmpty(t, r.Explanations)
		for _, e := range r.Explanations {
			assert.Less(t, len(e), 400, e)
			assert.Contains(t, e, "… (10001 bytes)")
		}
	})
}

// TestLineMemoryIsBoundedByTheLine is the 63 MB line of issue 26 at 1/8
// scale: reading one line of [1,1,…] allocates a small multiple of its
// size (it took 2.76 GB for 63 MB: 44×).
func TestLineMemoryIsBoundedByTheLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"id": "x", "value": [1`)
	for b.Len() < 8<<20 {
		b.WriteString(",1")
	}
	b.WriteString("]}\n")
	size := uint64(b.Len())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := ReadJSONL(&b, "big.jsonl")
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, out, 1)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte line: %d bytes allocated (%.1f×)", size, allocated, float64(allocated)/float64(size))
	assert.Less(t, allocated, 10*size+(1<<20), "allocation per line is bounded by 10× the line")
}
