package ha_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// A group partition is a schedule where hosts on both sides take over
// and neither side's routes reach the other until the heal; the rules of
// node_converge.go and node_cutoff.go make output resume and keep the
// standby strategies precise where a host with the state serves.

const partitionRun = `duration: 3s
drain: 2s
cpu: {per_op: 2us, per_byte: 2ns, per_event: 1us}
network: {latency: 1ms, jitter: 200us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
spares: 2
`

// partitionCase is one schedule, the rule it guards and its evidence.
type partitionCase struct {
	name string
	yaml string
	// plants undo the rules the case guards; with any one of them the
	// case fails.
	plants []ha.Planted
	// strategies the case runs under (nil: partitionStrategies).
	strategies []string
	// precise lists the strategies that must recover precisely.
	precise []string
	// trigger checks in the trace of a strategy's run that the schedule
	// did what it is about (a takeover on each side, a fenced host, an
	// empty restart refused in a minority), so that no change of draws
	// makes the case pass vacuously.
	trigger func(t *testing.T, strategy string, tr *ha.Trace)
}

var partitionCases = []partitionCase{
	{
		// Outside the island W.1 takes W over; inside, J.2 would restart
		// J empty. Amnesia and upstream backup do: after the heal J and W
		// are fenced but alive, and only the routes passed on tell J.2
		// and W.1 about each other. The standby strategies refuse the
		// empty restart from a minority view, and J keeps its state.
		name: "join island {W, J.2, src2}",
		yaml: partitionRun + `source: {rate: 800, keys: 16, streams: 2, value: {dist: uniform, max: 1}}
nodes:
  - {name: J, ops: [{join: {window: 300ms}}]}
  - {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}
faults:
  - {at: 400ms, for: 258ms, partition: [[W, J.2, src2], [src, J, J.1, W.1, W.2, sink]]}
`,
		// The takeover re-check (node_recheck.go) guards this case too: its
		// answers carry the routes, so each rule shows only with it undone.
		// The hold for W.1 that a host of J used to start when it learnt
		// W.1's route late, after the heal, is ended by W.1's resume
		// (no-upstream-resume) and no longer started (hold-for-told-route):
		// either rule alone recovers, and so does the bound on any hold
		// (unbounded-hold, node_holdbound.go), undone with them.
		plants: []ha.Planted{ha.PlantSilentFence | ha.PlantTakeoverStorm,
			ha.PlantNoUpstreamResume | ha.PlantHoldForToldRoute | ha.PlantTakeoverStorm | ha.PlantUnboundedHold | minorityGuards,
			ha.PlantMinorityRestart | ha.PlantTakeoverStorm | minorityGuards},
		precise: []string{"passive-standby", "active-standby"},
		trigger: func(t *testing.T, strategy string, tr *ha.Trace) {
			requireTakeover(t, tr, "W.1")
			if standby(strategy) {
				requireNoTakeover(t, tr, "J.2")
			}
		},
	},
	{
		// A.1 takes A over outside. Inside, B.2 sees A and C.2 but no
		// majority of the deployment: under the standby strategies it
		// does not restart B empty, and after the heal B, which kept the
		// state, learns A.1's route from the fenced A. (Under amnesia and
		// upstream backup B.2 may take over once C.2 did: the routes
		// converge after the heal.)
		name: "chain island {A, B.2, C.2}",
		yaml: partitionRun + `source: {rate: 800, keys: 16, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
faults:
  - {at: 1s, for: 300ms, partition: [[A, B.2, C.2], [src, A.1, A.2, B, B.1, C, C.1, sink]]}
`,
		plants:  []ha.Planted{ha.PlantNoUpstreamResume | ha.PlantUnboundedHold | minorityGuards, ha.PlantMinorityRestart | minorityGuards},
		precise: []string{"passive-standby", "active-standby"},
		trigger: func(t *testing.T, strategy string, tr *ha.Trace) {
			requireTakeover(t, tr, "A.1")
			requireEvent(t, tr, ha.EvFenced, "A")
			if standby(strategy) {
				requireNoTakeover(t, tr, "B.2")
			}
		},
	},
	{
		// B paused past the timeout, B.1 cut off beside the sink: B.1
		// sees no majority and does not take over on its view alone, B.2
		// on the other side does not restart B empty before B resumes;
		// B, resumed, must neither let A trim what B.1 holds while its
		// view settles nor drop B.1 from its route before it sees it is
		// cut off, and the sink must come back to B.
		name: "pause of B and island {sink, B.1}",
		yaml: partitionRun + `source: {rate: 800, keys: 16, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
faults:
  - {at: 1s, pause: B, for: 300ms}
  - {at: 1.05s, for: 400ms, partition: [[sink, B.1], [src, A, A.1, A.2, B, B.2]]}
`,
		plants:  []ha.Planted{ha.PlantSilentFence},
		precise: []string{"passive-standby", "active-standby"},
		trigger: func(t *testing.T, _ string, tr *ha.Trace) {
			requireEvent(t, tr, ha.EvDetect, "B.2")
			requireNoTakeover(t, tr, "B.1")
		},
	},
	{
		// Every secondary cut off together: B.1 sees A.1 and C.1, a host
		// on each side of its fragment, but no majority of the
		// deployment. Taking over on that view alone, with state that
		// lags B's, would fence B after the heal and ask A for input it
		// trimmed meanwhile.
		name: "secondaries island {A.1, B.1, C.1}",
		yaml: partitionRun + `source: {rate: 800, keys: 16, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
faults:
  - {at: 1s, for: 400ms, partition: [[A.1, B.1, C.1], [src, A, A.2, B, B.2, C, C.2, sink]]}
`,
		// B.1 hears neither side's primary: the silent probe is sent again
		// too (silence-decides), so that rule is undone as well.
		plants:  []ha.Planted{ha.PlantMinorityRestart | minorityGuards | ha.PlantSilenceDecides},
		precise: []string{"passive-standby", "active-standby", "upstream-backup"},
		trigger: func(t *testing.T, _ string, tr *ha.Trace) {
			requireEvent(t, tr, ha.EvDetect, "B.1")
			requireNoTakeover(t, tr, "B.1")
		},
	},
	{
		// B keeps serving its side while B.1 takes over on the other;
		// B must not let A trim what B.1 asks for after the heal.
		name: "split fragment {src, A*, B} | {B.1, B.2, C*, sink}",
		yaml: partitionRun + `source: {rate: 800, keys: 16, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
faults:
  - {at: 1s, for: 800ms, partition: [[src, A, A.1, A.2, B], [B.1, B.2, C, C.1, C.2, sink]]}
`,
		plants:  []ha.Planted{ha.PlantTrimWhileCutOff},
		precise: []string{"passive-standby", "active-standby", "upstream-backup"},
		trigger: func(t *testing.T, strategy string, tr *ha.Trace) {
			if standby(strategy) {
				// B.1 sees A.3, a host of A outside the partition; under
				// the other strategies A has no host there, and B.1,
				// cut off from the input, does not take over.
				requireTakeover(t, tr, "B.1")
				requireEvent(t, tr, ha.EvFenced, "B")
			}
		},
	},
	{
		// M.1, M's backup, is cut off beside M's downstream W while M
		// serves on with the majority and recruits M.2, whose checkpoints
		// let J trim. M.1 sees J dead and hears only W: no takeover on
		// that one side (its view, a minority, refuses too). A takeover
		// from M.1's older checkpoint would ask J for input J trimmed for
		// M. (After the heal, seeing J back before M, it asks M first:
		// interaction script minority_backup_beside_downstream.)
		name: "backup island beside the downstream {W, M.1, J.3, src2}",
		// the standby strategies' fourth host (a second spare) is in it
		strategies: []string{"passive-standby", "active-standby"},
		yaml: `duration: 3s
drain: 2s
cpu: {per_op: 2us, per_byte: 2ns, per_event: 1us}
network: {latency: 1ms, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms, suspicion_mult: 4}
spares: 2
strategy: {name: passive-standby, checkpoint_interval: 300ms, mode: incremental, full_every: 3}
source: {rate: 100, keys: 4, streams: 2, value: {dist: uniform, max: 1}}
nodes:
  - {name: J, ops: [{join: {window: 300ms}}]}
  - {name: M, ops: [{map: {scale: 1}}]}
  - {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}
faults:
  - {at: 2.29s, for: 480ms, partition: [[W, M.1, J.3, src2], [J, J.1, J.2, M, M.2, M.3, W.1, W.2, W.3, src, sink]]}
`,
		plants:  []ha.Planted{ha.PlantOneSidedProbe},
		precise: []string{"passive-standby", "active-standby"},
		trigger: func(t *testing.T, strategy string, tr *ha.Trace) {
			requireTakeover(t, tr, "W.1")
			if standby(strategy) {
				requireNoTakeover(t, tr, "M.1")
			}
		},
	},
}

// minorityGuards are the rules that keep a host in a minority island from
// taking over on a one-sided probe or, after the heal, from a primary it
// declared dead there (node_elect.go, node_askprimary.go): they guard the
// island cases too, so the rules those cases are about show only with
// them undone.
const minorityGuards = ha.PlantOneSidedProbe | ha.PlantMinorityDeathTrusted

// partitionStrategies are the strategies every case runs under.
var partitionStrategies = []string{"amnesia", "passive-standby", "active-standby", "upstream-backup"}

// runPlanted runs the experiment under one strategy with the planted
// bugs p and classifies it against the failure-free reference.
func runRoutesPlanted(t *testing.T, e *experiment.Experiment, ref *ha.Trace, name string, p ha.Planted) (*ha.Trace, metrics.Recovery) {
	t.Helper()
	out, err := sim.RunPlanted(e, name, p)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref, out.Trace)
	return out.Trace, rec
}

// partitionOutcome is what a case's run showed: whether output resumed
// and whether the run kept the promise the case makes for its strategy.
func partitionOutcome(pc partitionCase, name string, tr *ha.Trace, rec metrics.Recovery, refLast time.Duration) (resumed, kept bool) {
	resumed = tr.Deliveries().LastTime() >= refLast-500*time.Millisecond
	kept = resumed && (name == "amnesia" || rec.Missing == 0)
	if slices.Contains(pc.precise, name) {
		kept = kept && rec.Type == "precise"
	}
	return resumed, kept
}

// standby reports whether strategy keeps a replica with the state, and
// so refuses an empty restart from a minority view.
func standby(strategy string) bool {
	return strategy == "passive-standby" || strategy == "active-standby"
}

// TestGroupPartitionsRecover: after each group partition output resumes
// under every strategy, nothing but amnesia misses an output, and the
// strategies a case names recover precisely — for several seeds, each
// checked for its trigger. With any of the case's rules undone (its
// planted bugs), some strategy on some seed breaks that, so the case
// guards its rules.
func TestGroupPartitionsRecover(t *testing.T) {
	t.Parallel()
	for _, pc := range partitionCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			broken := map[ha.Planted]bool{}
			for _, seed := range []int{1, 2, 3} {
				e, err := experiment.Parse([]byte(fmt.Sprintf("name: routes\nseed: %d\n%s", seed, pc.yaml)), t.Name())
				require.NoError(t, err)
				ref, err := sim.ReferenceTrace(e)
				require.NoError(t, err)
				refLast := ref.Deliveries().LastTime()
				strategies := pc.strategies
				if strategies == nil {
					strategies = partitionStrategies
				}
				for _, name := range strategies {
					tr, rec := runRoutesPlanted(t, e, ref, name, 0)
					pc.trigger(t, name, tr)
					resumed, kept := partitionOutcome(pc, name, tr, rec, refLast)
					assert.True(t, resumed, "seed %d, %s: output resumes (last at %s, failure-free %s)",
						seed, name, tr.Deliveries().LastTime(), refLast)
					assert.True(t, kept, "seed %d, %s: %s, %d missing: %v", seed, name, rec.Type, rec.Missing, rec.Explanations)
					for _, p := range pc.plants {
						if !broken[p] {
							tr, rec = runRoutesPlanted(t, e, ref, name, p)
							_, keptPlanted := partitionOutcome(pc, name, tr, rec, refLast)
							broken[p] = !keptPlanted
						}
					}
				}
			}
			for _, p := range pc.plants {
				assert.True(t, broken[p], "with %s planted the case must fail somewhere: it does not guard its rule", p)
			}
		})
	}
}

// requireNoTakeover fails if host took over.
func requireNoTakeover(t *testing.T, tr *ha.Trace, host string) {
	t.Helper()
	for _, e := range tr.Events() {
		require.False(t, e.Kind == ha.EvTakeover && e.Host == host, "%s took over at %s", host, e.T)
	}
}
