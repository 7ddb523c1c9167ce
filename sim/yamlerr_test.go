package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/sim"
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
			_, err := sim.Parse([]byte(tt.yaml), "exp.yaml")
			require.ErrorIs(t, err, sim.ErrConfig)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "sim.")
			assert.NotContains(t, err.Error(), "float64")
		})
	}
}

// TestSweepPointErrorsHaveNoLines: a sweep point's YAML is generated, so
// its errors name the parameter's path and no line.
func TestSweepPointErrorsHaveNoLines(t *testing.T) {
	for _, tt := range []struct{ param, want string }{
		{"source.rat", "source.rat: unknown field (source has: rate"},
		{"source.rate", `source.rate: want a number, got "x"`},
	} {
		sw, err := sim.NewSweep("s", sim.DefaultYAML, []sim.SweepParam{{Name: tt.param, Values: []string{"x"}}}, []string{"amnesia"}, 1, nil)
		if err == nil {
			_, err = sw.Experiment(sw.Point(0))
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.NotContains(t, err.Error(), "line ")
		assert.Contains(t, err.Error(), "sweep point "+tt.param+"=x: "+tt.want, "the point is named by its parameter values")
	}
}
