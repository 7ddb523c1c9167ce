package experiment_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

// TestHostileSweepValues checks that `sweep --param` values go through the
// same ranges, with errors naming the point's parameters (the point's text
// is generated: its line numbers would mean nothing to the user).
func TestHostileSweepValues(t *testing.T) {
	for _, tc := range []struct {
		param experiment.SweepParam
		want  string
	}{
		{experiment.SweepParam{Name: "source.skew", Values: []string{"0", ".inf"}}, "sweep point source.skew=.inf: source.skew: want a number from 0 to 100"},
		{experiment.SweepParam{Name: "source.rate", Values: []string{"1e12"}}, "sweep point source.rate=1e12: source.rate:"},
		{experiment.SweepParam{Name: "drain", Values: []string{"[1s]"}}, "sweep point drain=[1s]: drain: want a duration"},
		{experiment.SweepParam{Name: "checkpoint_interval", Values: []string{"1ns"}}, "checkpoint_interval: must be at least 1ms"},
	} {
		t.Run(tc.param.Name, func(t *testing.T) {
			_, err := experiment.NewSweep("s", experiment.DefaultYAML, []experiment.SweepParam{tc.param}, []string{"passive-standby"}, 1, nil)
			require.ErrorIs(t, err, experiment.ErrConfig)
			require.Contains(t, err.Error(), tc.want)
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
		sw, err := experiment.NewSweep("s", experiment.DefaultYAML, []experiment.SweepParam{{Name: tt.param, Values: []string{"x"}}}, []string{"amnesia"}, 1, nil)
		if err == nil {
			_, err = sw.Experiment(sw.Point(0))
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.NotContains(t, err.Error(), "line ")
		assert.Contains(t, err.Error(), "sweep point "+tt.param+"=x: "+tt.want, "the point is named by its parameter values")
	}
}
