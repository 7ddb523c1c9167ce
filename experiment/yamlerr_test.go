package experiment_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

// TestDecodingErrorsSpeakYAML: a decoding error reads FILE:LINE: FIELD:
// problem, with the line counted from 1, and never names a Go type.
func TestDecodingErrorsSpeakYAML(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unclosed list on line 2", "name: x\nseed: [1\n", "exp.yaml:2: YAML syntax: did not find expected ',' or ']'"},
		{"unclosed mapping on line 3", "name: x\nseed: 1\nsource: {rate: 1\n", "exp.yaml:3: YAML syntax: did not find expected ',' or '}'"},
		{"bad indentation", "name: x\nsource:\n  rate: 1\n keys: 2\n", "exp.yaml:4: YAML syntax: did not find expected key"},
		{"scanner error keeps its line", "name: x\nseed: 1\n  bad: 2\n", "exp.yaml:3: YAML syntax: mapping values are not allowed in this context"},
		{"unknown field", "name: x\nsource: {rat: 10}\n", "exp.yaml:2: source.rat: unknown field (source has: rate, keys, skew, value, arrival, batch, streams)"},
		{"unknown field in a list item", "name: x\nnodes:\n  - {name: A, ops: [{filter: {}}]}\n  - name: B\n    opz: []\n", "exp.yaml:5: nodes[1].opz: unknown field (nodes[1] has: name, ops)"},
		{"unknown top-level field", "name: x\nsede: 1\n", "exp.yaml:2: sede: unknown field (the experiment has: name, seed, duration"},
		{"number wanted", "name: x\nsource: {rate: fast}\n", `exp.yaml:2: source.rate: want a number, got "fast"`},
		{"whole number wanted", "name: x\nspares: lots\n", `exp.yaml:2: spares: want a whole number, got "lots"`},
		{"list wanted", "name: x\nnodes: {a: 1}\n", "exp.yaml:2: nodes: want a list, got a mapping"},
		{"duration wanted", "name: x\ndetector: {timeout: soon}\n", `exp.yaml:2: detector.timeout: want a duration such as 200ms, got "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.Parse([]byte(tt.yaml), "exp.yaml")
			require.ErrorIs(t, err, experiment.ErrConfig)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotRegexp(t, `experiment\.[A-Z]`, err.Error(), "no Go type of package experiment")
			assert.NotContains(t, err.Error(), "float64")
		})
	}
}
