package sim_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// TestNewRejectsWhatItCannotRun: a Config built in Go gets the range checks
// an experiment file gets, as an error naming the field.
func TestNewRejectsWhatItCannotRun(t *testing.T) {
	good := func(t *testing.T) sim.Config {
		e := experiment.Default()
		st, err := strategies.Build("none", nil)
		require.NoError(t, err)
		cfg, err := sim.ConfigFor(e, st, true)
		require.NoError(t, err)
		return cfg
	}
	cases := []struct {
		name string
		edit func(*sim.Config)
		want string
	}{
		{"loss above 1", func(c *sim.Config) { c.Network.Loss = 2 }, "Network.Loss"},
		{"negative loss", func(c *sim.Config) { c.Network.Loss = -0.1 }, "Network.Loss"},
		{"loss not a number", func(c *sim.Config) { c.Network.Loss = math.NaN() }, "Network.Loss"},
		{"negative latency", func(c *sim.Config) { c.Network.Latency = -1 }, "Network.Latency"},
		{"negative jitter", func(c *sim.Config) { c.Network.Jitter = -1 }, "Network.Jitter"},
		{"negative bandwidth", func(c *sim.Config) { c.Network.Bandwidth = -1 }, "Network.Bandwidth"},
		{"negative cpu cost", func(c *sim.Config) { c.CPU.PerOp = -1 }, "CPU.PerOp"},
		{"negative detector timeout", func(c *sim.Config) { c.Detector.Timeout = -1 }, "Detector.Timeout"},
		{"no end", func(c *sim.Config) { c.End = 0 }, "End"},
		{"no topology", func(c *sim.Config) { c.Topology = nil }, "Topology"},
		{"no strategy", func(c *sim.Config) { c.Strategy = nil }, "Strategy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good(t)
			tc.edit(&cfg)
			_, err := sim.New(cfg)
			require.ErrorIs(t, err, sim.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := sim.New(good(t))
	require.NoError(t, err)
}
