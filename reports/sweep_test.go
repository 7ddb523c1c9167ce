package reports

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// sweepTestStrategy is amnesia with a declared parameter, to check that a
// strategy parameter reaches the strategies that declare it only.
type sweepTestStrategy struct{ strategies.Amnesia }

func (sweepTestStrategy) Name() string { return "sweeptest" }

func init() {
	strategies.Register(strategies.Info{
		Name: "sweeptest", Doc: "amnesia with a knob (reports tests)", Hidden: true,
		Params: []strategies.Param{{Name: "knob", Type: "int", Default: "1", Doc: "does nothing"}},
		New:    func(strategies.Params) (ha.Strategy, error) { return sweepTestStrategy{}, nil },
	})
}

// testExperiment is short: 6 s with a crash of B at 3.4 s.
const testExperiment = `name: small
seed: 7
duration: 6s
drain: 2s
source: {rate: 400, keys: 4, value: {dist: uniform, min: 0, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
spares: 1
detector: {heartbeat: 50ms, timeout: 200ms}
faults:
  - {at: 3.4s, crash: B}
`

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestSweepBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param experiment.SweepParam
		want  string
	}{
		{"unknown field", experiment.SweepParam{Name: "source.rte", Values: []string{"1"}}, "rte"},
		{"unknown bare name", experiment.SweepParam{Name: "bogus", Values: []string{"1"}}, "unknown sweep parameter"},
		{"index out of range", experiment.SweepParam{Name: "faults[3].at", Values: []string{"1s"}}, "out of range"},
		{"bad value", experiment.SweepParam{Name: "source.rate", Values: []string{"fast"}}, "sweep point"},
		{"not a scalar", experiment.SweepParam{Name: "source", Values: []string{"1"}}, "not a single value"},
		{"invalid strategy value", experiment.SweepParam{Name: "knob", Values: []string{"-1"}}, "knob"},
		{"no values", experiment.SweepParam{Name: "source.rate"}, "no values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := experiment.NewSweep("t", testExperiment, []experiment.SweepParam{tc.param}, []string{"amnesia", "sweeptest"}, 1, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, experiment.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSetPath(t *testing.T) {
	for _, tc := range []struct{ path, value, want string }{
		{"source.rate", "900", "rate: 900"},
		{"faults[0].at", "2s", "at: 2s"},
		{"nodes[1].ops[0].tumbling.size", "250ms", "size: 250ms"},
		{"network.loss", "0.01", "loss: 0.01"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			sw, err := experiment.NewSweep("t", testExperiment, []experiment.SweepParam{{Name: tc.path, Values: []string{tc.value}}}, []string{"amnesia"}, 1, nil)
			require.NoError(t, err)
			e, err := sw.Experiment(sw.Point(0))
			require.NoError(t, err)
			text, err := yaml.Marshal(e)
			require.NoError(t, err)
			assert.Contains(t, string(text), tc.want)
		})
	}
}
