package classify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundedPair: explanations show values to 4 significant digits, more
// only when that is what tells them apart; text that is no number stays.
func TestRoundedPair(t *testing.T) {
	tests := []struct{ got, want, g, w string }{
		{"49.15765249149101", "119.1436379109985", "49.16", "119.1"},
		{"1.00001", "1.00002", "1.00001", "1.00002"},
		{"12345.6", "2", "12346", "2"},
		{"0.000123456", "0.5", "0.0001235", "0.5"},
		{`{"a":1}`, `{"a":2}`, `{"a":1}`, `{"a":2}`},
		{"NaN", "3", "NaN", "3"},
	}
	for _, tc := range tests {
		g, w := roundedPair(tc.got, tc.want)
		assert.Equal(t, tc.g, g, tc.got)
		assert.Equal(t, tc.w, w, tc.want)
	}
}

// TestWrongByRoundingSaysSo: a wrong value within rounding of the
// expected one names its relative error and the mechanism, alone or in a
// grouped sentence; a difference of whole units does not.
func TestWrongByRoundingSaysSo(t *testing.T) {
	const note = "(relative error 1.3e-16: floating-point rounding)"
	alone := Classify([]Output{{ID: "k06#885", Value: "436.7865846570499"}},
		[]Output{{ID: "k06#885", Value: "436.78658465704984"}}, nil)
	require.Len(t, alone.Explanations, 1)
	assert.Contains(t, alone.Explanations[0], note)

	exp := []Output{{ID: "k06#885", Value: "436.7865846570499"}, {ID: "k06#886", Value: "2"}}
	obs := []Output{{ID: "k06#885", Value: "436.78658465704984"}, {ID: "k06#886", Value: "3"}}
	res := Classify(exp, obs, nil)
	require.Len(t, res.Explanations, 1, "two wrong outputs of one kind and context: one sentence")
	assert.Contains(t, res.Explanations[0], "436.7865846570499 "+note)
	assert.Contains(t, res.Explanations[0], "3 instead of 2")
	assert.NotContains(t, res.Explanations[0], "3 instead of 2 (relative", "a difference of whole units is not rounding")
}
