package experiment_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/strategies"
)

// TestNodeConfigCarriesTheExperimentsNodeSettings: the one conversion every
// driver uses carries trace_emits, fencing and the source, and gives a
// configuration NewNode accepts for every host.
func TestNodeConfigCarriesTheExperimentsNodeSettings(t *testing.T) {
	e, err := experiment.Parse([]byte(experiment.DefaultYAML+"trace_emits: true\nfencing: false\n"), "test")
	require.NoError(t, err)
	st, err := strategies.Build("amnesia", nil)
	require.NoError(t, err)
	topo := e.Topology(st)
	for _, h := range topo.Hosts() {
		c := e.NodeConfig(h, topo, st, nil)
		assert.True(t, c.TraceEmits, h)
		assert.True(t, c.NoFencing, h)
		assert.Equal(t, e.SourceSpec(0), c.Source, h)
		assert.ErrorContains(t, c.Validate(), "Env: nil", "%s: the driver's Env is still missing", h)
	}
	assert.Equal(t, 200*time.Millisecond, e.DetectorTimeout(len(topo.Hosts())))
}
