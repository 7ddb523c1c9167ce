package classify

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadJSONL(t *testing.T) {
	in := "\ufeff" + `{"id": "k03|w=9s", "value": 40.5, "key": "k03", "n": 1000, "t": 9012.5}` + "\r\n" +
		"\n   \n" +
		`{"id": "s0:17", "value": {"b": [1, 2.0], "a": "x"}}` + "\n" +
		`{"id": "s0:18", "key": null, "n": 1e3, "t": null}` + "\n" +
		`{"value": true, "id": "s0:19", "n": 0, "t": -5}` // no final newline
	got, err := ReadJSONL(strings.NewReader(in), "observed.jsonl")
	require.NoError(t, err)
	assert.Equal(t, []Output{
		{ID: "k03|w=9s", Key: "k03", Value: "40.5", N: 1000, HasN: true, T: 9012.5, HasT: true},
		{ID: "s0:17", Value: `{"a":"x","b":[1,2]}`},
		{ID: "s0:18", Value: "null", N: 1000, HasN: true},
		{ID: "s0:19", Value: "true", N: 0, HasN: true, T: -5, HasT: true},
	}, got)

	got, err = ReadJSONL(strings.NewReader(""), "empty.jsonl")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestReadJSONLErrors(t *testing.T) {
	good := `{"id": "a", "value": 1}` + "\n"
	tests := []struct {
		name string
		line string
		want string
	}{
		{"invalid JSON", `{"id": "a", "value": }`, `observed.jsonl:3: invalid JSON: `},
		{"truncated object", `{"id": "a"`, `observed.jsonl:3: invalid JSON: `},
		{"garbage", `hello`, `observed.jsonl:3: invalid JSON: `},
		{"trailing data", `{"id": "a"} {"id": "b"}`, `observed.jsonl:3: invalid JSON: `},
		{"not an object", `[1, 2]`, `observed.jsonl:3: expected a JSON object`},
		{"null line", `null`, `observed.jsonl:3: expected a JSON object`},
		{"missing id", `{"value": 1}`, `observed.jsonl:3: missing "id"`},
		{"null id", `{"id": null}`, `observed.jsonl:3: missing "id"`},
		{"empty id", `{"id": ""}`, `observed.jsonl:3: "id" must not be empty`},
		{"numeric id", `{"id": 7}`, `observed.jsonl:3: "id" must be a string`},
		{"negative n", `{"id": "a", "n": -1}`, `observed.jsonl:3: "n" must be a non-negative integer`},
		{"fractional n", `{"id": "a", "n": 1.5}`, `observed.jsonl:3: "n" must be a non-negative integer`},
		{"string n", `{"id": "a", "n": "5"}`, `observed.jsonl:3: "n" must be a non-negative integer`},
		{"huge n", `{"id": "a", "n": 1e30}`, `observed.jsonl:3: "n" must be a non-negative integer`},
		{"string t", `{"id": "a", "t": "9s"}`, `observed.jsonl:3: "t" must be a number (ms)`},
		{"quoted number t", `{"id": "a", "t": "9"}`, `observed.jsonl:3: "t" must be a number (ms)`},
		{"infinite t", `{"id": "a", "t": 1e999}`, `observed.jsonl:3: "t" must be a finite number (ms)`},
		{"key not a string", `{"id": "a", "key": 3}`, `observed.jsonl:3: "key" must be a string`},
		{"unknown field", `{"id": "a", "seq": 3}`, `observed.jsonl:3: unknown field "seq"`},
		{"field names are case-sensitive", `{"ID": "a"}`, `observed.jsonl:3: unknown field "ID"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := good + "\n" + tc.line + "\n" + good
			got, err := ReadJSONL(strings.NewReader(in), "observed.jsonl")
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q, want prefix %q", err, tc.want)
			assert.ErrorIs(t, err, ErrFormat)
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "observed.jsonl", le.File)
			assert.Equal(t, 3, le.Line)
			assert.Len(t, got, 1, "outputs before the bad line are returned")
		})
	}
}

func TestReadJSONLReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`{"id": "a"}`+"\n"), iotest.ErrReader(boom))
	_, err := ReadJSONL(r, "x.jsonl")
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "x.jsonl:2: read: boom")
	assert.NotErrorIs(t, err, ErrFormat)
}

func TestReadJSONLLongLine(t *testing.T) {
	big := strings.Repeat("x", 2<<20) // a 2 MiB value
	in := `{"id": "a", "value": "` + big + `"}` + "\n" + `{"id": "b"}`
	got, err := ReadJSONL(iotest.HalfReader(strings.NewReader(in)), "big.jsonl")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, `"`+big+`"`, got[0].Value)
	assert.Equal(t, "b", got[1].ID)
}

func TestCanonicalValue(t *testing.T) {
	groups := [][]string{
		{`1`, `1.0`, `1e0`, `10e-1`, ` 1 `},
		{`0`, `-0`, `0.0`, `-0e5`},
		{`40.5`, `405e-1`},
		{`{"a": 1, "b": [1, 2.50]}`, `{"b":[1.0,2.5],"a":1e0}`},
		{`{"x": {"q": null, "p": true}}`, `{"x":{"p":true,"q":null}}`},
		{`"1"`},
		{`[1, "1"]`},
		{`"a\u0041"`, `"aA"`},
		{`12345678901234567890123`, `1.2345678901234567890123e22`},
	}
	var seen []string
	for _, g := range groups {
		first, err := CanonicalValue([]byte(g[0]))
		require.NoError(t, err, g[0])
		for _, v := range g[1:] {
			c, err := CanonicalValue([]byte(v))
			require.NoError(t, err, v)
			assert.Equal(t, first, c, "%s vs %s", g[0], v)
		}
		assert.NotContains(t, seen, first, "groups must differ")
		seen = append(seen, first)
	}
	c, err := CanonicalValue([]byte(`{"b": [1, 2.50], "a": "x"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":"x","b":[1,2.5]}`, c)
	assert.Equal(t, "40.5", CanonicalFloat(40.5))
	assert.Equal(t, "1e+21", CanonicalFloat(1e21))
	big, err := CanonicalValue([]byte(`1e999`))
	require.NoError(t, err)
	assert.Equal(t, "1e+999", big, "numbers beyond float64 keep their exact value")

	for _, bad := range []string{``, `{`, `1 2`, `nul`} {
		_, err := CanonicalValue([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestReadJSONLValuesCompareCanonically(t *testing.T) {
	exp, err := ReadJSONL(strings.NewReader(`{"id":"a","value":1}
{"id":"b","value":{"x":1,"y":[2]}}`), "expected.jsonl")
	require.NoError(t, err)
	obs, err := ReadJSONL(strings.NewReader(`{"id":"a","value":1.0}
{"id":"b","value":{"y":[2e0],"x":1.00}}`), "observed.jsonl")
	require.NoError(t, err)
	r := Classify(exp, obs, nil)
	assert.Equal(t, TypePrecise, r.Type)
}

func FuzzReadJSONL(f *testing.F) {
	seeds := []string{
		"",
		"\n\n",
		`{"id": "k03|w=9s", "value": 40.5, "key": "k03", "n": 1000, "t": 9012.5}`,
		`{"id": "a", "value": 1}` + "\n" + `{"id": "a", "value": 1}` + "\n" + `{"id": "b", "value": {"z": [1, {"y": null}]}}`,
		`{"id": "a", "key": "x", "n": 3}` + "\r\n" + `{"id": "b", "key": "y", "n": 0, "t": -1}`,
		`{"id": "a", "value": 1e999}`,
		`{"id": "a", "n": 1e3}`,
		`{"id": "a", "n": -1}`,
		`{"id": ""}`,
		`{"id": 1}`,
		`{"value": 1}`,
		`{"id": "a", "zzz": 1}`,
		`[1, 2]`,
		`null`,
		`{"id": "a"`,
		"\xff\xfe{\"id\": \"\xff\"}",
		`{"id": "a", "value": "\ud800"}`,
		`{"id":"a","value":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}`,
		`{"id": "a", "value": 9007199254740993}`,
		`{"id": "a", "value": {"b": -0.000e-3, "a": ["\u00e9", 1.50E+2]}}`,
		`{"id": "\ud83d\ude00", "value": 1}`,
		`{"id": "a\udcff", "value": 1}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		outs, err := ReadJSONL(strings.NewReader(string(data)), "fuzz.jsonl")
		if err != nil {
			require.ErrorIs(t, err, ErrFormat)
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.jsonl:"), err.Error())
			return
		}
		for _, o := range outs {
			require.NotEmpty(t, o.ID)
			require.GreaterOrEqual(t, o.N, int64(0))
			require.True(t, utf8.ValidString(o.ID), "ids are valid UTF-8")
			again, err := CanonicalValue([]byte(o.Value))
			require.NoError(t, err, "a canonical value is valid JSON")
			require.Equal(t, o.Value, again, "canonical form is a fixed point")
			require.LessOrEqual(t, len(o.Value), 8*len(data)+16, "a value's text is bounded by its line")
		}
		r := Classify(outs, outs, []Mark{{At: 1, Label: "m"}})
		require.Equal(t, TypePrecise, r.Type)
		require.Zero(t, r.Missing+r.Duplicates+r.Wrong+r.Spurious)
		require.Zero(t, r.LostInputs)
		require.Empty(t, r.Explanations)
		require.Len(t, r.Status, len(outs))
	})
}
