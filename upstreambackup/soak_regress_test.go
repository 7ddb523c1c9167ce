package upstreambackup_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
)

// TestShortFalseSuspicion is a failure found by `streamha soak`
// (docs/reliability.md): A pauses a little longer than the source's
// detection timeout but resumes before anyone takes over. The source
// skipped A while it believed A dead; the node now resends that output from
// its queue when A is seen alive again (it used to be lost: gap).
func TestShortFalseSuspicion(t *testing.T) {
	t.Parallel()
	e, err := experiment.Parse([]byte(`name: soak-regression
seed: 1122736193
duration: 2s
drain: 2s
source: {rate: 100, keys: 32, arrival: poisson}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
strategy: {name: upstream-backup, ack_interval: 100ms, dedup: true}
network: {latency: 1ms, jitter: 200us, bandwidth: 1Gbps}
faults:
  - {at: 1.55s, for: 240ms, pause: A}
`), t.Name())
	require.NoError(t, err)
	c, err := sim.Compare(e, []string{"upstream-backup"})
	require.NoError(t, err)
	r := c.Runs[0].Run.Recovery
	require.Equal(t, "precise", r.Type, r.Explanations)
	require.Equal(t, r.Expected, r.Delivered)
}
