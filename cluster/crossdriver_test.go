package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"

	_ "github.com/streamha/streamha/passivestandby"
)

// crossDriverYAML crashes one fragment 1 s into a 4 s emission: 3 s for
// memberlist to declare it dead on a loaded machine (TestClusterEndToEnd).
const crossDriverYAML = `name: cross
seed: 11
duration: 4s
drain: 1s
source: {rate: 200, keys: 4, value: {dist: uniform, min: 0, max: 1}}
nodes:
%s
spares: 1
trace_emits: true
faults:
  - {at: 1s, crash: %s}
`

// TestClusterAgreesWithTheSimulator runs a few experiments of the
// cross-driver table (inproc's TestDriversAgree) on real processes and
// requires the simulator's verdict, where the real run stayed inside the
// fault model: the crashed host the only one declared dead, and declared
// early enough for the takeover to be judged. Every node builds its node
// with experiment.NodeConfig, so trace_emits reaches the cluster as well.
func TestClusterAgreesWithTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for ~15 s")
	}
	cases := []struct {
		name, nodes, crash, strategy string
	}{
		{"crash of a map", "  - {name: A, ops: [{map: {scale: 2}}]}\n  - {name: B, ops: [{map: {scale: 1}}]}", "A", "amnesia"},
		{"crash of a window", "  - {name: A, ops: [{map: {scale: 2}}]}\n  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}", "B", "passive-standby"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			yml := fmt.Sprintf(crossDriverYAML, c.nodes, c.crash)
			e, err := experiment.Parse([]byte(yml), c.name)
			require.NoError(t, err)
			simCmp, err := sim.Compare(e, []string{c.strategy})
			require.NoError(t, err)
			want := simCmp.Runs[0].Run.Recovery.Type

			cmp := launchTest(t, yml, []string{c.strategy}, "")
			require.Len(t, cmp.Runs, 1)
			tr := cmp.Runs[0].Trace
			var emits int
			var detect *ha.Event
			for _, ev := range tr.Events() {
				switch ev.Kind {
				case ha.EvEmit:
					emits++
				case ha.EvDetect:
					if ev.Peer == c.crash && detect == nil {
						detect = &ev
					}
				}
			}
			assert.Positive(t, emits, "trace_emits: the cluster's nodes trace what they emit")
			require.NotNil(t, detect, "the crash of %s is detected", c.crash)
			if others := declaredDead(tr, c.crash); len(others) > 0 || detect.T > 3*time.Second {
				t.Logf("%v declared dead besides %s, or %s declared dead only at %s: outside the fault model, the verdict is not compared",
					others, c.crash, c.crash, detect.T)
				return
			}
			got := cmp.Result.Runs[0].Recovery
			assert.Equal(t, want, got.Type, "%s: simulator %s, cluster %s (missing %d dup %d wrong %d: %v)",
				c.strategy, want, got.Type, got.Missing, got.Duplicates, got.Wrong, got.Explanations)
		})
	}
}
