package passivestandby_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/strategies"
)

// TestParams: every parameter is documented and parsed; bad values are
// errors naming the parameter.
func TestParams(t *testing.T) {
	t.Parallel()
	info, err := strategies.Lookup(passivestandby.Name)
	require.NoError(t, err)
	var names []string
	for _, p := range info.Params {
		names = append(names, p.Name)
		assert.NotEmpty(t, p.Doc, p.Name)
		assert.NotEmpty(t, p.Default, p.Name)
	}
	assert.Equal(t, []string{"checkpoint_interval", "mode", "full_every", "async", "log_nondeterminism",
		"order_interval", "mtbf", "ack_interval"}, names)

	ok := []struct {
		name string
		raw  map[string]any
		want func(c passivestandby.Config) bool
	}{
		{"defaults", nil, func(c passivestandby.Config) bool {
			return c == passivestandby.DefaultConfig() && c.Interval == 200*time.Millisecond && !c.Incremental
		}},
		{"interval", map[string]any{"checkpoint_interval": "1s"}, func(c passivestandby.Config) bool {
			return c.Interval == time.Second && !c.Auto
		}},
		{"auto", map[string]any{"checkpoint_interval": "auto", "mtbf": "5m"}, func(c passivestandby.Config) bool {
			return c.Auto && c.MTBF == 5*time.Minute
		}},
		{"incremental", map[string]any{"mode": "incremental", "full_every": 3}, func(c passivestandby.Config) bool {
			return c.Incremental && c.FullEvery == 3
		}},
		{"nondeterminism", map[string]any{"log_nondeterminism": true, "order_interval": "10ms", "async": true},
			func(c passivestandby.Config) bool {
				return c.LogNondeterminism && c.OrderInterval == 10*time.Millisecond && c.Async
			}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			s, err := strategies.Build(passivestandby.Name, tc.raw)
			require.NoError(t, err)
			ps, isPS := s.(*passivestandby.Strategy)
			require.True(t, isPS)
			assert.True(t, tc.want(ps.Config()), "%+v", ps.Config())
			assert.Equal(t, 2, s.Replicas())
			assert.Equal(t, []string{"B"}, s.InitialReceivers([]string{"B", "B.1", "B.2"}))
		})
	}

	bad := []struct {
		name string
		raw  map[string]any
		msg  string
	}{
		{"interval not a duration", map[string]any{"checkpoint_interval": "often"}, "checkpoint_interval: want a duration such as 200ms, or auto"},
		{"interval zero", map[string]any{"checkpoint_interval": "0s"}, "checkpoint_interval: must be at least 1ms"},
		{"interval negative", map[string]any{"checkpoint_interval": "-1s"}, "checkpoint_interval: must be at least 1ms"},
		{"unknown mode", map[string]any{"mode": "delta"}, "strategy.mode: want one of full, incremental"},
		{"full_every zero", map[string]any{"full_every": 0}, "full_every: must be at least 1"},
		{"mtbf zero", map[string]any{"mtbf": "0s"}, "mtbf: must be positive"},
		{"ack_interval zero", map[string]any{"ack_interval": "0s"}, "ack_interval: must be positive"},
		{"unknown parameter", map[string]any{"interval": "1s"}, "unknown parameter"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strategies.Build(passivestandby.Name, tc.raw)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestYoungInterval checks the formula and its bounds.
func TestYoungInterval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cost, mtbf, want time.Duration
	}{
		{10 * time.Millisecond, 60 * time.Second, 1095445115},
		{5 * time.Millisecond, 10 * time.Second, 316227766},
		{time.Microsecond, time.Second, passivestandby.MinAutoInterval},
		{time.Minute, 10 * time.Second, 10 * time.Second},
	}
	for _, tc := range cases {
		assert.InDelta(t, float64(tc.want), float64(passivestandby.YoungInterval(tc.cost, tc.mtbf)), 1e3,
			"cost %s mtbf %s", tc.cost, tc.mtbf)
	}
}
