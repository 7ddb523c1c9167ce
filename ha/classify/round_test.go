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

func TestWrongByRoundingSaysSo(t *testing.T) {
	exp := []Output{{ID: "k06#885", Value: "436.7865846570499"}, {ID: "k06#886", Value: "2"}}
	obs := []Output{{ID: "k06#885", Value: "436.78658465704984"}, {ID: "k06#886", Value: "3"}}
	res := Classify(exp, obs, nil)
	require.Len(t, res.Explanations, 2)
	assert.Contains(t, res.Explanations[0], "(relative error 1.3e-16: floating-point rounding)")
	assert.NotContains(t, res.Explanations[1], "rounding", "a difference of whole units is not rounding")
}
