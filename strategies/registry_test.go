package strategies_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"

	// The whole registry: this test lists it.
	_ "github.com/streamha/streamha/strategies/all"
)

func init() {
	strategies.Register(strategies.Info{
		Name: "test-params",
		Doc:  "a strategy that only exists in this test",
		Params: []strategies.Param{
			{Name: "interval", Type: "duration", Default: "200ms", Doc: "how often"},
			{Name: "count", Type: "int", Default: "3", Doc: "how many"},
			{Name: "ratio", Type: "float", Default: "0.5", Doc: "how much"},
			{Name: "on", Type: "bool", Default: "false", Doc: "whether"},
			{Name: "mode", Type: "full|incremental", Default: "full", Doc: "which"},
		},
		New:    func(strategies.Params) (ha.Strategy, error) { return strategies.None{}, nil },
		Hidden: true,
	})
}

func TestParseParams(t *testing.T) {
	info, err := strategies.Lookup("test-params")
	require.NoError(t, err)
	p, err := info.Parse(map[string]any{"interval": "1s", "count": 7, "on": true, "mode": "incremental"})
	require.NoError(t, err)
	assert.Equal(t, time.Second, p.Duration("interval"))
	assert.Equal(t, 7, p.Int("count"))
	assert.Equal(t, 0.5, p.Float("ratio"), "defaults fill what is not given")
	assert.True(t, p.Bool("on"))
	assert.Equal(t, "incremental", p.String("mode"))

	bad := []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"intervall": "1s"}, `strategy.intervall: unknown parameter for test-params (known: interval, count, ratio, on, mode)`},
		{map[string]any{"interval": "-1s"}, "strategy.interval: must not be negative"},
		{map[string]any{"interval": "soon"}, `strategy.interval: want a duration such as 200ms, got "soon"`},
		{map[string]any{"count": "many"}, "strategy.count: want an integer"},
		{map[string]any{"count": -2}, "strategy.count: must not be negative"},
		{map[string]any{"ratio": "x"}, "strategy.ratio: want a number"},
		{map[string]any{"on": "maybe"}, "strategy.on: want true or false"},
		{map[string]any{"mode": "partial"}, "strategy.mode: want one of full, incremental"},
	}
	for _, b := range bad {
		_, err := info.Parse(b.raw)
		require.Error(t, err)
		assert.Contains(t, err.Error(), b.want)
	}
}

func TestLookupAndNames(t *testing.T) {
	_, err := strategies.Lookup("paxos")
	require.ErrorIs(t, err, strategies.ErrUnknown)
	assert.Contains(t, err.Error(), "amnesia")
	names := strategies.Names(false)
	require.NotEmpty(t, names)
	assert.Equal(t, "amnesia", names[0], "baselines first")
	assert.NotContains(t, names, "none")
	assert.NotContains(t, names, "test-params")
	all := strategies.Names(true)
	assert.Equal(t, "none", all[0])
	assert.Contains(t, all, "test-params")
	_, err = strategies.Build("amnesia", map[string]any{"x": 1})
	require.ErrorContains(t, err, "amnesia takes none")
	assert.Panics(t, func() { strategies.Register(strategies.Info{Name: "amnesia"}) }, "duplicate names are a programming error")
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"passive-standby": true, "my_strategy2": true, "a": true,
		"": false, "../../x": false, "A": false, "a.b": false, "a b": false, "-a": false,
		"é": false, strings.Repeat("a", strategies.MaxNameLen+1): false,
	} {
		assert.Equal(t, want, strategies.ValidName(name), "%q", name)
	}
	assert.Panics(t, func() { strategies.Register(strategies.Info{Name: "../x"}) }, "a name outside the alphabet is a programming error")
	for _, n := range strategies.Names(true) {
		assert.True(t, strategies.ValidName(n), "registered name %q", n)
	}
}
