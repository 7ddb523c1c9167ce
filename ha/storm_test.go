package ha_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// stormChain is the default query's shape with short windows.
const stormChain = `duration: 4s
drain: 2s
source: {rate: 2000, keys: 16}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 200ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
`

// takeovers counts the takeovers of fragment B's hosts.
func takeovers(tr *ha.Trace) int {
	k := 0
	for _, e := range tr.Events() {
		if e.Kind == ha.EvTakeover && strings.HasPrefix(e.Host, "B") {
			k++
		}
	}
	return k
}

// declared reports whether host declared peer dead.
func declared(tr *ha.Trace, host, peer string) bool {
	for _, e := range tr.Events() {
		if e.Kind == ha.EvDetect && e.Host == host && e.Peer == peer {
			return true
		}
	}
	return false
}

// TestNoTakeoverStorm: replicas of B cut off from each other, but not from
// the rest, each declare the other dead. The one fenced by the other's
// takeover (a route relayed by the neighbours, or sent directly at the
// heal) still believed the new primary dead and took over again, and so
// on until the detector saw them alive: up to 65 takeovers in one run,
// each restarting the fragment. With the takeover re-check a fragment
// takes over at most once per replica that lost sight of the primary, and
// output stays as each strategy promises.
func TestNoTakeoverStorm(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		spares     int
		fault      string
		max        int      // takeovers allowed: one per replica cut off from the primary
		strategies []string // the strategies run
		precise    []string // those that must recover precisely
		storms     []string // those that stormed without the re-check
	}{
		{"B and B.1 cut off from each other", 1, "{at: 2s, for: 290ms, partition: [[B], [B.1]]}", 1,
			[]string{"amnesia", "active-standby", "upstream-backup"}, []string{"active-standby"}, []string{"amnesia", "upstream-backup"}},
		{"B and B.1 cut off from each other, no spare", 0, "{at: 2s, for: 290ms, partition: [[B], [B.1]]}", 1,
			[]string{"passive-standby", "active-standby"}, []string{"passive-standby", "active-standby"}, nil},
		{"B cut off from its two replicas", 2, "{at: 2s, for: 400ms, partition: [[B], [B.1, B.2]]}", 1,
			[]string{"amnesia", "active-standby", "upstream-backup"}, []string{"active-standby"}, []string{"upstream-backup"}},
		{"three replicas cut off from each other", 2, "{at: 2s, for: 300ms, partition: [[B], [B.1], [B.2]]}", 2,
			[]string{"amnesia", "upstream-backup"}, nil, []string{"amnesia", "upstream-backup"}},
	}
	for _, c := range cases {
		for _, s := range c.strategies {
			t.Run(c.name+"/"+s, func(t *testing.T) {
				t.Parallel()
				yml := stormChain + fmt.Sprintf("spares: %d\nfaults: [%s]\n", c.spares, c.fault)
				stormed := false
				for seed := 1; seed <= 2; seed++ {
					r := runPlanted(t, yml, seed, s, ha.PlantNone)
					require.True(t, declared(r.tr, "B", "B.1") && declared(r.tr, "B.1", "B"), "B and B.1 declared each other dead")
					assert.LessOrEqual(t, takeovers(r.tr), c.max, "seed %d: takeovers of B", seed)
					assert.GreaterOrEqual(t, r.tr.Deliveries().LastTime(), r.ref.Deliveries().LastTime()-300*time.Millisecond, "output resumes")
					if slices.Contains(c.precise, s) {
						assert.Equal(t, "precise", r.rec.Type, "seed %d: %v", seed, r.rec.Explanations)
					}
					if s == "upstream-backup" {
						assert.Zero(t, r.rec.Missing+int(r.rec.LostInputs), "seed %d: %v", seed, r.rec.Explanations)
					}
					if takeovers(runPlanted(t, yml, seed, s, ha.PlantTakeoverStorm).tr) > c.max {
						stormed = true
					}
				}
				if slices.Contains(c.storms, s) {
					assert.True(t, stormed, "without the re-check the replicas take over in turn")
				}
			})
		}
	}
}
