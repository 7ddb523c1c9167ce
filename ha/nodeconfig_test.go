package ha_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestNewNodeRejectsWhatItCannotBuild: every configuration NewNode cannot
// build a node from is an error naming the field, never a panic.
func TestNewNodeRejectsWhatItCannotBuild(t *testing.T) {
	good := func() ha.NodeConfig {
		return ha.NodeConfig{Host: "A", Topology: testTopology(), Env: &fakeEnv{}, Strategy: retainAll{}}
	}
	cases := []struct {
		name string
		edit func(*ha.NodeConfig)
		want string
	}{
		{"only a host", func(c *ha.NodeConfig) { *c = ha.NodeConfig{Host: "A"} }, "Topology: nil"},
		{"no host", func(c *ha.NodeConfig) { c.Host = "" }, "Host: empty"},
		{"no env", func(c *ha.NodeConfig) { c.Env = nil }, "Env: nil"},
		{"no strategy", func(c *ha.NodeConfig) { c.Strategy = nil }, "Strategy: nil"},
		{"host not in the topology", func(c *ha.NodeConfig) { c.Host = "Z" }, "not in the topology"},
		{"no sources", func(c *ha.NodeConfig) { c.Topology.Sources = nil }, "need 1 or 2 sources"},
		{"no operator constructor", func(c *ha.NodeConfig) { c.Topology.Frags[0].NewOps = nil }, "fragment A: NewOps: nil"},
		{"a source without a rate", func(c *ha.NodeConfig) { c.Host = "src" }, "rate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good()
			tc.edit(&cfg)
			n, err := ha.NewNode(cfg)
			require.Error(t, err)
			assert.Nil(t, n)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	n, err := ha.NewNode(good())
	require.NoError(t, err)
	assert.Equal(t, "A", n.Host())
}
