package ha_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"

	_ "github.com/streamha/streamha/globalcheckpoint"
)

// plantedRun is one strategy's run of experiment text yml (without seed)
// at seed with the bugs p planted, classified against the failure-free
// run without HA.
type plantedRun struct {
	rec   metrics.Recovery
	tr    *ha.Trace
	ref   *ha.Trace
	strat string
}

func runPlanted(t *testing.T, yml string, seed int, strategy string, p ha.Planted) plantedRun {
	t.Helper()
	e, err := experiment.Parse([]byte(fmt.Sprintf("name: planted\nseed: %d\n%s", seed, yml)), t.Name())
	require.NoError(t, err)
	_, ref, err := sim.Reference(e)
	require.NoError(t, err)
	out, err := sim.RunPlanted(e, strategy, p)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref.Trace, out.Trace)
	return plantedRun{rec: rec, tr: out.Trace, ref: ref.Trace, strat: strategy}
}

// endChain is a chain whose last two fragments are windows, so that a
// lost end of stream leaves windows open at both.
const endChain = `duration: 3s
drain: 2s
source: {rate: 2000, keys: 16}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 200ms, agg: sum}}]}
  - {name: C, ops: [{sliding: {size: 400ms, slide: 100ms, agg: count}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
`

// allStrategies are the five built-in strategies.
var allStrategies = []string{"amnesia", "passive-standby", "active-standby", "upstream-backup", "global-checkpoint"}

// endRepaired reports whether some host asked again for the end of a
// stream it had not received (the trigger of end-of-stream repair).
func endRepaired(tr *ha.Trace) bool {
	for _, e := range tr.Events() {
		if e.Kind == ha.EvRepair && strings.Contains(e.Note, "stream ended") {
			return true
		}
	}
	return false
}

// TestEndOfStreamIsRepaired: loss or a short partition over the end of the
// stream lost the end mark and the tail marker, and the last windows never
// closed under any strategy (global-checkpoint's final checkpoint never
// completed). With end-of-stream repair the end arrives: every strategy
// that retains its output delivers every output, passive and active
// standby and global-checkpoint precisely; with the repair planted out,
// outputs go missing.
func TestEndOfStreamIsRepaired(t *testing.T) {
	t.Parallel()
	cut := func(h string) string {
		var rest []string
		for _, o := range []string{"src", "A", "A.1", "A.2", "B", "B.1", "B.2", "C", "C.1", "C.2", "sink"} {
			if o != h {
				rest = append(rest, o)
			}
		}
		return fmt.Sprintf("[[%s], [%s]]", h, strings.Join(rest, ", "))
	}
	cases := []struct {
		name    string
		faults  string
		seed    int
		planted []string // the strategies that lose output with the repair planted out (nil: all but amnesia)
	}{
		{"partition of C over the end", fmt.Sprintf("faults: [{at: 3s, for: 140ms, partition: %s}]\n", cut("C")), 1, nil},
		// With the repair planted out, global checkpoint still closes the
		// last windows here (another path brings the sink the end); the
		// other cases guard its repair.
		{"partition of the sink over the end", fmt.Sprintf("faults: [{at: 3s, for: 140ms, partition: %s}]\n", cut("sink")), 2,
			[]string{"passive-standby", "active-standby", "upstream-backup"}},
		{"all output of B lost over the end", "faults: [{at: 3s, for: 300ms, loss: {from: B, p: 1}}]\n", 3, nil},
		{"30 % loss over the last 300 ms and the drain's start", "faults: [{at: 2.7s, for: 600ms, loss: {p: 0.3}}]\n", 1,
			[]string{"active-standby", "upstream-backup"}},
	}
	for _, c := range cases {
		for _, s := range allStrategies {
			t.Run(c.name+"/"+s, func(t *testing.T) {
				t.Parallel()
				lost := c.planted == nil || slices.Contains(c.planted, s)
				r := runPlanted(t, endChain+c.faults, c.seed, s, ha.PlantNone)
				if lost {
					require.True(t, endRepaired(r.tr), "the end of a stream was lost and asked for again")
				}
				assert.GreaterOrEqual(t, r.tr.Deliveries().LastTime(), r.ref.Deliveries().LastTime()-300*time.Millisecond, "output resumes")
				if s != "amnesia" {
					assert.Zero(t, r.rec.Missing, "%v", r.rec.Explanations)
					assert.Zero(t, r.rec.LostInputs, "%v", r.rec.Explanations)
				}
				if s == "passive-standby" || s == "active-standby" || s == "global-checkpoint" {
					assert.Equal(t, "precise", r.rec.Type, "%v", r.rec.Explanations)
				}
				if s == "amnesia" || !lost {
					return
				}
				bad := runPlanted(t, endChain+c.faults, c.seed, s, ha.PlantNoEndRepair)
				assert.Positive(t, bad.rec.Missing, "without end-of-stream repair the last windows never close")
			})
		}
	}
}
