package sim_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// TestEndOfStreamShowsALateCrash: a join whose windows outlast the
// source, crashed late in the run. Without an end-of-stream mark the last
// windows never closed in either run and amnesia looked precise; with it
// they close in both, and amnesia's forgotten tuples show.
func TestEndOfStreamShowsALateCrash(t *testing.T) {
	e, err := experiment.Parse([]byte(`name: joinlate
seed: 3
duration: 10s
source: {rate: 400, keys: 32, streams: 2}
nodes:
  - {name: J, ops: [{join: {window: 2s}}]}
  - {name: W, ops: [{tumbling: {size: 1s, agg: count}}]}
network: {latency: 1ms, jitter: 100us}
faults:
  - {at: 6.3s, crash: J}
`), "joinlate")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"amnesia", "active-standby"})
	require.NoError(t, err)
	last, ok := cmp.Reference.Deliveries().Last()
	require.True(t, ok)
	assert.Equal(t, "k31|w=10s", last.Tuple.ID.String(), "the end of the stream closed the last window (of the join results stamped 10 s)")
	am, as := cmp.Result.Runs[0].Recovery, cmp.Result.Runs[1].Recovery
	assert.Equal(t, "gap", am.Type, "amnesia forgot the join's open windows")
	assert.Positive(t, am.LostInputs)
	assert.Equal(t, "precise", as.Type)
	assert.False(t, as.NotRecovered)
}

// TestNotRecoveredWithoutSpares: with no spare and no replica the crashed
// fragment never comes back; the run reports it not recovered, never a
// recovery time.
func TestNotRecoveredWithoutSpares(t *testing.T) {
	e, err := experiment.Parse([]byte(`name: nospare
seed: 42
duration: 4s
drain: 1s
source: {rate: 500, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
spares: 0
faults:
  - {at: 2s, crash: B}
`), "nospare")
	require.NoError(t, err)
	for _, s := range []string{"none", "amnesia"} {
		cmp, err := sim.Compare(e, []string{s})
		require.NoError(t, err)
		r := cmp.Result.Runs[0].Recovery
		assert.Nil(t, r.RecoveryMs, s)
		assert.True(t, r.NotRecovered, s)
		require.NotNil(t, r.ObservedMs, s)
		assert.InDelta(t, 3000, *r.ObservedMs, 1, "%s: observed from the crash to the end of the run", s)
		assert.Equal(t, "not recovered (> 3.0 s)", r.RecoveryText(), s)
		assert.Equal(t, "gap", r.Type, s)
		assert.NotEqual(t, metrics.NotRecoveredType, r.Type, "%s: nothing was being caught up", s)
	}
}

// TestOutstandingWhenTheRunEndsCatchingUp: upstream backup replays a
// running sum's whole history to a slow replacement and is still catching
// up when the run ends. What it had not delivered yet is outstanding, not
// missing, and the verdict says so instead of "gap".
func TestOutstandingWhenTheRunEndsCatchingUp(t *testing.T) {
	e, err := experiment.Parse([]byte(`name: rsum-late
seed: 5
duration: 10s
drain: 1s
source: {rate: 1000, keys: 8}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.2}}]}
  - {name: B, ops: [{running_sum: {}}]}
cpu: {per_op: 600us}
network: {latency: 1ms, jitter: 100us}
faults:
  - {at: 9.6s, crash: B}
`), "rsum-late")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"upstream-backup"})
	require.NoError(t, err)
	r := cmp.Result.Runs[0].Recovery
	assert.Equal(t, metrics.NotRecoveredType, r.Type)
	assert.Positive(t, r.Outstanding)
	assert.Zero(t, r.Missing, "nothing is missing yet")
	assert.Zero(t, r.LostInputs)
	assert.Nil(t, r.RecoveryMs)
	assert.Equal(t, fmt.Sprintf("not recovered by end of run (%d outstanding)", r.Outstanding), r.Label())
}
