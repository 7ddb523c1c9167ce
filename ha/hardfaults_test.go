package ha_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"

	// The strategies under test register themselves.
	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// hardFault is a schedule that stalled or lost output through the
// runtime's own protocol before the election, resume and repair rules of
// node_elect.go and node_repair.go.
type hardFault struct {
	name  string
	yaml  string // the experiment without seed
	state bool   // some host with the failed fragments' state survives
	// trigger names the trace evidence that the schedule exercised the
	// rule it is about, so that no change of random draws makes a case
	// pass vacuously.
	trigger func(t *testing.T, tr *ha.Trace)
}

const hardChain = `duration: 8s
drain: 2s
source: {rate: 2000, keys: 16, value: {dist: uniform, min: 0, max: 1}}
cpu: {per_op: 2us, per_byte: 2ns, per_event: 1us}
detector: {heartbeat: 50ms, timeout: 200ms}
`

// threeNodes is the default query's chain, with two spares per fragment.
const threeNodes = `nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
spares: 2
`

var hardFaults = []hardFault{
	{
		// The new primaries of B and C each learn the other's route after
		// sending their resume: C.1's goes to the dead B first.
		name: "adjacent fragments within a link latency",
		yaml: hardChain + threeNodes + `network: {latency: 20ms, jitter: 100us, bandwidth: 1Gbps}
faults: [{at: 4.4s, crash: B}, {at: 4.41s, crash: C}]
`,
		state: true,
		trigger: func(t *testing.T, tr *ha.Trace) {
			requireTakeover(t, tr, "B.1")
			requireTakeover(t, tr, "C.1")
		},
	},
	{
		// Whoever detects C first waits for C.1, which failed too: the
		// election must move on to C.2 when C.1 is declared dead.
		name: "primary and next in line together",
		yaml: hardChain + `nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
  - {name: D, ops: [{map: {scale: 1}}]}
  - {name: E, ops: [{map: {scale: 1}}]}
spares: 3
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
faults: [{at: 4.4s, crash: C}, {at: 4.4s, crash: C.1}]
`,
		trigger: func(t *testing.T, tr *ha.Trace) { requireTakeover(t, tr, "C.2") },
	},
	{
		// Shorter than the detection: nobody takes over, and the tuples
		// lost on the cut links come back through gap repair.
		name: "short partition isolating B",
		yaml: hardChain + threeNodes + `network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
faults: [{at: 4.4s, for: 120ms, partition: [[B], [A, C, src, sink, B.1, B.2]]}]
`,
		state:   true,
		trigger: func(t *testing.T, tr *ha.Trace) { requireEvent(t, tr, ha.EvRepair, "B") },
	},
	{
		// Longer than the detection, and the hosts it leaves out stay
		// connected to both sides: B replaces its secondaries from there
		// while B.1 takes over. B's route changes must not outrank B.1's
		// takeover (Route.Version).
		name: "long partition cutting B off its data path only",
		yaml: hardChain + threeNodes + `network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
faults: [{at: 4.4s, for: 600ms, partition: [[B], [A, C, src, sink, A.1, A.2, B.1, B.2, C.1, C.2]]}]
`,
		state:   true,
		trigger: func(t *testing.T, tr *ha.Trace) { requireTakeover(t, tr, "B.1") },
	},
	{
		name: "loss burst on two links",
		yaml: hardChain + threeNodes + `network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
faults: [{at: 4.4s, for: 1s, loss: {from: A, to: B, p: 0.05}}, {at: 4.4s, for: 1s, loss: {from: B, to: C, p: 0.05}}]
`,
		state:   true,
		trigger: func(t *testing.T, tr *ha.Trace) { requireEvent(t, tr, ha.EvRepair, "B") },
	},
}

// TestHardFaultsRecover: under every strategy output resumes after each
// schedule, and passive and active standby, which keep a host with the
// state, recover precisely — for several seeds, each checked for the
// trigger of its schedule.
func TestHardFaultsRecover(t *testing.T) {
	t.Parallel()
	names := []string{"amnesia", "passive-standby", "active-standby", "upstream-backup"}
	for _, hf := range hardFaults {
		for _, seed := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed %d", hf.name, seed), func(t *testing.T) {
				t.Parallel()
				e, err := sim.Parse([]byte(fmt.Sprintf("name: hard\nseed: %d\n%s", seed, hf.yaml)), t.Name())
				require.NoError(t, err)
				c, err := sim.Compare(e, names)
				require.NoError(t, err)
				refLast := c.Reference.Deliveries().LastTime()
				for _, r := range c.Runs {
					rec := r.Run.Recovery
					last := r.Trace.Deliveries().LastTime()
					assert.GreaterOrEqual(t, last, refLast-time.Second,
						"%s: output resumes (last output at %s, failure-free %s)", r.Run.Strategy, last, refLast)
					if hf.state && (r.Run.Strategy == "passive-standby" || r.Run.Strategy == "active-standby") {
						assert.Equal(t, "precise", rec.Type, "%s: %v", r.Run.Strategy, rec.Explanations)
					}
					if r.Run.Strategy != "amnesia" {
						assert.Zero(t, rec.Missing, "%s: %v", r.Run.Strategy, rec.Explanations)
					}
					hf.trigger(t, r.Trace)
				}
			})
		}
	}
}

func requireEvent(t *testing.T, tr *ha.Trace, kind ha.EventKind, host string) {
	t.Helper()
	for _, e := range tr.Events() {
		if e.Kind == kind && e.Host == host {
			return
		}
	}
	require.Failf(t, "trigger missing", "no %s event of %s: the schedule did not exercise its rule", kind, host)
}

func requireTakeover(t *testing.T, tr *ha.Trace, host string) {
	t.Helper()
	requireEvent(t, tr, ha.EvTakeover, host)
}
