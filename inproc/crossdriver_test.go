package inproc_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/inproc"
	"github.com/streamha/streamha/sim"

	_ "github.com/streamha/streamha/globalcheckpoint"
)

// crossDriverCase is one experiment of the cross-driver table: its nodes
// and faults, and the strategies it runs under.
type crossDriverCase struct {
	name       string
	nodes      string
	streams    int
	faults     string
	strategies []string
}

// crossDriverCases are run through the simulator and the in-process
// runtime, which must reach the same verdict.
var crossDriverCases = []crossDriverCase{
	{"crash of a map", mapNodes, 1, "[{at: 600ms, crash: A}]", []string{"amnesia", "passive-standby", "active-standby", "upstream-backup"}},
	{"crash of a window", windowNodes, 1, "[{at: 600ms, crash: B}]", []string{"amnesia", "passive-standby", "active-standby", "upstream-backup"}},
	{"crash of the last fragment", windowNodes, 1, "[{at: 700ms, crash: C}]", []string{"passive-standby", "active-standby"}},
	{"crash of two adjacent fragments", windowNodes, 1, "[{at: 600ms, crash: A}, {at: 600ms, crash: B}]", []string{"active-standby"}},
	{"crash of a running sum", sumNodes, 1, "[{at: 600ms, crash: A}]", []string{"passive-standby", "global-checkpoint"}},
	{"crash of a union", unionNodes, 2, "[{at: 600ms, crash: A}]", []string{"amnesia", "passive-standby", "active-standby"}},
	{"partition shorter than detection", windowNodes, 1, "[{at: 600ms, for: 50ms, partition: [[src, A], [B, C, sink]]}]", []string{"passive-standby", "active-standby"}},
	{"partition past detection", mapNodes, 1, "[{at: 600ms, for: 600ms, partition: [[src, A, A.1], [B, B.1, sink]]}]", []string{"passive-standby"}},
	{"pause past detection", windowNodes, 1, "[{at: 600ms, for: 500ms, pause: B}]", []string{"passive-standby", "active-standby"}},
	{"no fault", windowNodes, 1, "[]", []string{"passive-standby", "upstream-backup"}},
	{"crash and pause", mapNodes, 1, "[{at: 500ms, crash: A}, {at: 900ms, for: 80ms, pause: B}]", []string{"active-standby"}},
}

const (
	mapNodes = `  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}`
	windowNodes = `  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 100ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`
	sumNodes = `  - {name: A, ops: [{running_sum: {}}]}
  - {name: B, ops: [{map: {scale: 1}}]}`
	unionNodes = `  - {name: A, ops: [{union: {}}, {tumbling: {size: 100ms, agg: count}}]}
  - {name: B, ops: [{map: {scale: 1}}]}`
)

func (c crossDriverCase) experiment(t *testing.T) *experiment.Experiment {
	t.Helper()
	e, err := experiment.Parse([]byte(fmt.Sprintf(`name: cross
seed: 5
duration: 1.5s
drain: 1s
source: {rate: 500, keys: 4, streams: %d, value: {dist: uniform, min: 0, max: 1}}
nodes:
%s
spares: 1
detector: {heartbeat: 50ms, timeout: 200ms}
strategies: [{name: upstream-backup, dedup: true}]
faults: %s
`, c.streams, c.nodes, c.faults)), c.name)
	require.NoError(t, err)
	return e
}

// TestDriversAgree runs a table of experiments through the simulator and
// the in-process runtime (inside a synctest bubble, so its clock is
// virtual and the verdict does not depend on how loaded the machine is)
// and requires the same verdict: the recovery type each run is classified
// as, against the simulator's failure-free no-HA output. The table holds
// only verdicts that do not depend on the network's latency: upstream
// backup runs with dedup, since without it its duplicates after a crash
// depend on which acknowledgements were on their way, and the in-process
// runtime has no latency.
func TestDriversAgree(t *testing.T) {
	for _, c := range crossDriverCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := c.experiment(t)
			cmp, err := sim.Compare(e, c.strategies)
			require.NoError(t, err)
			for i, name := range c.strategies {
				simRec := cmp.Runs[i].Run.Recovery
				cfg, err := inproc.ConfigFor(e, name, false)
				require.NoError(t, err)
				// To the end, as simulated: a run stopped once no data is in
				// flight could end before a transactional sink's last commit.
				cfg.StopWhenDrained = false
				var rec metrics.Recovery
				synctest.Test(t, func(t *testing.T) {
					out, err := inproc.Run(context.Background(), cfg)
					require.NoError(t, err)
					rec = metrics.RecoveryOf(cmp.Reference, out.Trace)
				})
				assert.Equal(t, simRec.Type, rec.Type, "%s: simulator %s (missing %d dup %d wrong %d), in-process %s (missing %d dup %d wrong %d: %v)",
					name, simRec.Type, simRec.Missing, simRec.Duplicates, simRec.Wrong, rec.Type, rec.Missing, rec.Duplicates, rec.Wrong, rec.Explanations)
				t.Logf("%s: %s", name, rec.Type)
			}
		})
	}
}
