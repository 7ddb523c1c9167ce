package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// deliveries is a trace whose sink received one output per (key, event
// time in ms), whose id is first + the event time in ms.
func deliveries(first int64, outs ...[2]int64) *ha.Trace {
	t := ha.NewTrace()
	for _, o := range outs {
		at := time.Duration(o[1]) * time.Millisecond
		t.Add(ha.Event{T: at + time.Millisecond, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{
			Key: uint32(o[0]), Time: int64(at), ID: ha.OutputID{Kind: ha.IDKey, Key: uint32(o[0]), X: first + o[1]}}})
	}
	return t
}

// TestLiveness: outputs from inputs after the heal and the reach must
// arrive, matched by key and event time (renumbered ids count as
// arrived); the check does not apply when a fragment lost every host.
func TestLiveness(t *testing.T) {
	t.Parallel()
	c := soakCase(t, "amnesia", "", "repeatable", "  - {at: 1s, for: 300ms, partition: [[A, B.1], [A.1, B, src, sink]]}")
	ref := deliveries(1, [2]int64{1, 1000}, [2]int64{1, 2400}, [2]int64{2, 2500}, [2]int64{1, 3000})
	from := 1300*time.Millisecond + SoakLivenessReach

	l := checkLiveness(c.Experiment, c.Query, 1, ref, deliveries(1, [2]int64{1, 2400}, [2]int64{2, 2500}, [2]int64{1, 3000}))
	assert.True(t, l.Resumed(), "%+v", l)
	assert.Equal(t, from, l.From)
	assert.Equal(t, 3, l.Expected, "the output before the reach is not expected")
	assert.Zero(t, l.RenumberedIDs)

	l = checkLiveness(c.Experiment, c.Query, 1, ref, deliveries(1e6, [2]int64{1, 2400}, [2]int64{2, 2500}, [2]int64{1, 3000}))
	assert.True(t, l.Resumed())
	assert.Equal(t, 3, l.RenumberedIDs)

	l = checkLiveness(c.Experiment, c.Query, 1, ref, deliveries(1, [2]int64{1, 1000}, [2]int64{1, 2400}))
	assert.True(t, l.Stalled())
	assert.Equal(t, 2, l.Missing)
	assert.Contains(t, l.FirstMissing, "event time 2.5s")

	dead := soakCase(t, "amnesia", "", "repeatable", "  - {at: 1s, crash: B}\n  - {at: 2.6s, crash: B.1}\n  - {at: 4s, crash: B.2}")
	assert.False(t, checkLiveness(dead.Experiment, dead.Query, 1, ref, deliveries(1)).Checked, "no core: B lost every host")

	// Every fragment keeps a host, but more than half of the deployment
	// crashed: no host may take over by design, so the check does not apply.
	crash := func(nodes string, hosts ...string) *experiment.Experiment {
		y := "name: t\nduration: 4s\nsource: {rate: 100, keys: 4}\nspares: 2\nnodes: " + nodes + "\nfaults:\n"
		for _, h := range hosts {
			y += "  - {at: 1s, crash: " + h + "}\n"
		}
		e, err := experiment.Parse([]byte(y), t.Name())
		require.NoError(t, err)
		return e
	}
	three := "[{name: A, ops: [{map: {}}]}, {name: B, ops: [{map: {}}]}, {name: C, ops: [{map: {}}]}]"
	ok, why := coreUp(crash(three, "A", "A.1", "B", "B.1", "C", "C.1"), 1) // 6 of 11 hosts
	assert.False(t, ok)
	assert.Contains(t, why, "hosts crashed")
	two := "[{name: A, ops: [{map: {}}]}, {name: B, ops: [{map: {}}]}]"
	ok, _ = coreUp(crash(two, "A", "A.1", "B", "B.1"), 1) // 4 of 8: exactly half, the downstream's word decides
	assert.True(t, ok)
}

func msPtr(v float64) *float64 { return &v }

// TestCheckFigures: each rule of the figure check fires on its own.
func TestCheckFigures(t *testing.T) {
	t.Parallel()
	fault, end := time.Second, 6*time.Second
	resumed := Liveness{Checked: true, Expected: 5}
	stalled := Liveness{Checked: true, Expected: 5, Missing: 2}
	cases := []struct {
		name string
		rec  metrics.Recovery
		ok   bool
		live Liveness
		want string
	}{
		{"a sound recovery", metrics.Recovery{RecoveryMs: msPtr(250)}, true, resumed, ""},
		{"sound not recovered", metrics.Recovery{NotRecovered: true}, true, stalled, ""},
		{"before the fault", metrics.Recovery{RecoveryMs: msPtr(-5)}, true, resumed, "before the fault"},
		{"after the end", metrics.Recovery{RecoveryMs: msPtr(5100)}, true, resumed, "after the run's end"},
		{"nothing failed", metrics.Recovery{RecoveryMs: msPtr(10)}, false, resumed, "nothing failed"},
		{"both", metrics.Recovery{RecoveryMs: msPtr(10), NotRecovered: true}, true, Liveness{}, "both a recovery time and not recovered"},
		{"stalled but recovered", metrics.Recovery{RecoveryMs: msPtr(300)}, true, stalled, "output did not resume"},
		{"resumed but not recovered", metrics.Recovery{NotRecovered: true}, true, resumed, "though output resumed"},
		{"resumed under other ids", metrics.Recovery{NotRecovered: true}, true, Liveness{Checked: true, Expected: 5, RenumberedIDs: 5}, ""},
		{"lost beyond emitted", metrics.Recovery{LostInputs: 11}, true, resumed, "11 lost inputs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := CheckFigures(tc.rec, fault, tc.ok, end, 10, tc.live)
			if tc.want == "" {
				assert.Empty(t, bad)
				return
			}
			require.Len(t, bad, 1, "%v", bad)
			assert.Contains(t, bad[0], tc.want)
		})
	}
}

// TestCoverage: the named states are read from the trace as they happen.
func TestCoverage(t *testing.T) {
	t.Parallel()
	c := soakCase(t, "passive-standby", "", "convergent",
		"  - {at: 1s, for: 400ms, partition: [[src, A, B], [B.1, C, sink]]}\n  - {at: 3.9s, pause: C, for: 200ms}")
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	tr := ha.NewTrace(
		ha.Event{T: ms(900), Kind: ha.EvCheckpointBeg, Host: "B", Peer: "B.1", Seq: 7},
		ha.Event{T: ms(1000), Kind: ha.EvPartition, Note: "[[src A B] [B.1 C sink]]"},
		ha.Event{T: ms(1250), Kind: ha.EvTakeover, Host: "B.1", Peer: "B", Epoch: 1},
		ha.Event{T: ms(1300), Kind: ha.EvReplayStart, Host: "A", Peer: "B.1"},
		ha.Event{T: ms(1400), Kind: ha.EvHeal, Note: "[[src A B] [B.1 C sink]]"},
		ha.Event{T: ms(1420), Kind: ha.EvTakeover, Host: "B", Peer: "B.1", Epoch: 2},
		ha.Event{T: ms(1500), Kind: ha.EvCrash, Host: "C.1"},
		ha.Event{T: ms(3900), Kind: ha.EvPause, Host: "C", N: int64(ms(200))},
	)
	got := coverage(c.Experiment, tr)
	assert.ElementsMatch(t, []string{CovNeighboursDown, CovSplitFragment, CovGroupPartition, CovFencedHealed, CovTakeoverRace,
		CovCheckpointInterrupted, CovReplayAfterLoss, CovCrashDuringRecovery, CovLastWindow, CovEndOfStream,
		CovPauseAroundDetection}, got)
	assert.Equal(t, []string{CovLastWindow, CovEndOfStream}, coverage(c.Experiment, ha.NewTrace()), "only the schedule's own states without a trace")
}
