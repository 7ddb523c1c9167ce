package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// TestGenerateSoakCase: cases are a pure function of (seed, strategy,
// run), valid experiments whose faults name existing hosts, lie within
// the run and come in time order; the draw covers every query and fault kind.
func TestGenerateSoakCase(t *testing.T) {
	t.Parallel()
	queries := map[string]bool{}
	kinds := map[string]bool{}
	for _, strategy := range SoakStrategies() {
		for run := range uint64(25) {
			c, err := GenerateSoakCase(7, strategy, run)
			require.NoError(t, err)
			again, err := GenerateSoakCase(7, strategy, run)
			require.NoError(t, err)
			b1, _ := yaml.Marshal(c.Experiment)
			b2, _ := yaml.Marshal(again.Experiment)
			require.Equal(t, string(b1), string(b2), "deterministic")
			e := c.Experiment
			require.NotEmpty(t, e.Faults)
			require.LessOrEqual(t, e.Duration.D(), 5*time.Second)
			queries[c.Query] = true
			st, err := buildStrategy(c)
			require.NoError(t, err)
			_, err = ConfigFor(e, st, false) // every fault host exists under the strategy
			require.NoError(t, err, string(b1))
			for i, f := range e.Faults {
				require.GreaterOrEqual(t, f.At.D(), soakFirstFault)
				if i > 0 {
					require.GreaterOrEqual(t, f.At, e.Faults[i-1].At)
				}
				kinds[f.Kind()] = true
			}
		}
	}
	assert.Len(t, queries, len(soakQueries))
	assert.Len(t, kinds, 6, "%v", kinds)
	a, _ := GenerateSoakCase(7, "amnesia", 1)
	b, _ := GenerateSoakCase(7, "amnesia", 2)
	assert.NotEqual(t, a.Experiment.Seed, b.Experiment.Seed)
}

// soakCase builds a case from a query, strategy and faults (YAML list items).
func soakCase(t *testing.T, strategy, params, query, faults string) *SoakCase {
	t.Helper()
	var q soakQuery
	for _, sq := range soakQueries {
		if sq.name == query {
			q = sq
		}
	}
	require.NotEmpty(t, q.name)
	st := "name: " + strategy
	if params != "" {
		st += ", " + params
	}
	y := "name: t\nseed: 3\nduration: 4s\ndrain: 2s\nsource: {rate: 400, keys: 8, streams: " +
		map[int]string{1: "1", 2: "2"}[q.streams] + "}\nnodes: " + q.nodes + "\nstrategy: {" + st + "}\n" +
		"network: {latency: 1ms, jitter: 100us}\nfaults:\n" + faults
	e, err := experiment.Parse([]byte(y), t.Name())
	require.NoError(t, err, y)
	return &SoakCase{Strategy: strategy, Query: query, Experiment: e}
}

// TestInFaultModel: the fault model admits crashes, pauses, delays, loss
// and partitions with each fragment's failures a recovery window apart,
// adjacent fragments failing together except under upstream backup, and
// rejects the rest.
func TestInFaultModel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, strategy, query, faults string
		in                            bool
		why                           string
	}{
		{"one crash", "passive-standby", "convergent", "  - {at: 2s, crash: B}", true, ""},
		{"crash, pause and delay", "active-standby", "repeatable", "  - {at: 1s, crash: A}\n  - {at: 2.6s, pause: A.1, for: 300ms}\n  - {at: 1s, for: 2s, delay: {extra: 50ms}}", true, ""},
		{"two fragments at once, not adjacent", "passive-standby", "convergent", "  - {at: 2s, crash: A}\n  - {at: 2s, crash: C}", true, ""},
		{"crash during a recovery", "passive-standby", "convergent", "  - {at: 2s, crash: B}\n  - {at: 2.3s, crash: B.1}", false, "during a recovery"},
		{"pause of the primary, then the secondary crashes too soon", "active-standby", "repeatable", "  - {at: 1s, pause: B, for: 1s}\n  - {at: 3s, crash: B.1}", false, "during a recovery"},
		{"the paused primary crashes once back, the secondary never fails", "active-standby", "repeatable", "  - {at: 1s, pause: B, for: 1s}\n  - {at: 3s, crash: B}", true, ""},
		{"a crashed host crashed again", "passive-standby", "convergent", "  - {at: 2s, crash: B}\n  - {at: 2.3s, crash: B}", true, ""},
		{"a pause of a crashed host", "passive-standby", "convergent", "  - {at: 2s, crash: B}\n  - {at: 2.5s, pause: B, for: 400ms}", true, ""},
		{"a spare paused twice", "passive-standby", "convergent", "  - {at: 1s, pause: B.2, for: 400ms}\n  - {at: 2s, pause: B.2, for: 400ms}", true, ""},
		{"the secondary cut off twice", "active-standby", "join", "  - {at: 1s, for: 300ms, partition: [[W.1], [J, J.1, W, W.2, src, src2, sink]]}\n  - {at: 2s, for: 400ms, partition: [[W.1, J.1], [J, W, W.2, src, src2, sink]]}", true, ""},
		{"a spare crashes during a recovery", "passive-standby", "convergent", "  - {at: 2s, crash: B}\n  - {at: 2.5s, crash: B.2}", true, ""},
		{"spares fail, then the primary", "active-standby", "convergent", "  - {at: 1s, crash: B.2}\n  - {at: 1.2s, pause: B.3, for: 400ms}\n  - {at: 1.5s, crash: B}", true, ""},
		{"two spares of a fragment cut off together twice", "passive-standby", "convergent", "  - {at: 1s, for: 300ms, partition: [[B.2, B.3], [A, A.1, B, B.1, C, C.1, src, sink]]}\n  - {at: 2s, for: 300ms, partition: [[B.2, B.3], [A, A.1, B, B.1, C, C.1, src, sink]]}", true, ""},
		{"the primary, a recruited spare, then the backup", "passive-standby", "convergent",
			"  - {at: 1s, crash: B}\n  - {at: 2.2s, crash: B.2}\n  - {at: 3.4s, crash: B.1}", false, "B.2 fails at 2.2s, within 1.5s of the failure of B at 1s"},
		{"a backup that took over is not counted on again", "passive-standby", "convergent",
			"  - {at: 0.6s, crash: B}\n  - {at: 2.5s, crash: B.1}\n  - {at: 2.6s, crash: B.2}", false, "B.2 fails at 2.6s, within 1.5s of the failure of B.1 at 2.5s"},
		{"the primary cut off, then the secondary crashes", "active-standby", "convergent",
			"  - {at: 1s, for: 300ms, partition: [[B], [A, A.1, B.1, B.2, B.3, C, C.1, src, sink]]}\n  - {at: 2s, crash: B.1}", false, "during a recovery"},
		{"one state holder, two spares crash", "amnesia", "convergent", "  - {at: 2s, crash: B.1}\n  - {at: 2.3s, crash: B.2}", false, "during a recovery"},
		{"one state holder, a pause while paused", "amnesia", "convergent", "  - {at: 1s, pause: B, for: 1s}\n  - {at: 1.5s, pause: B, for: 300ms}", true, ""},
		{"one state holder, a crashed host crashed again", "amnesia", "convergent", "  - {at: 1s, crash: B}\n  - {at: 1.5s, crash: B}", true, ""},
		{"a pause too short to detect, then a crash", "passive-standby", "convergent", "  - {at: 1s, pause: B, for: 100ms}\n  - {at: 1.3s, crash: B}", true, ""},
		{"loss", "passive-standby", "repeatable", "  - {at: 1s, for: 1s, loss: {p: 0.1}}", true, ""},
		{"partition cutting one host off", "passive-standby", "repeatable", "  - {at: 1s, for: 1s, partition: [[A], [A.1, B, src, sink]]}", true, ""},
		{"short partition between two hosts of a fragment", "passive-standby", "repeatable", "  - {at: 1s, for: 100ms, partition: [[A], [A.1]]}", true, ""},
		{"partition between two hosts of a fragment", "passive-standby", "repeatable", "  - {at: 1s, for: 1s, partition: [[A], [A.1]]}", true, ""},
		{"a group of hosts of two fragments cut off", "passive-standby", "join", "  - {at: 0.64s, for: 258ms, partition: [[W, J.2, src2], [J, J.1, W.1, W.2, src, sink]]}", true, ""},
		{"a fragment split in two", "active-standby", "convergent", "  - {at: 1s, for: 800ms, partition: [[src, A, A.1, A.2, B], [B.1, B.2, C, C.1, C.2, sink]]}", true, ""},
		{"every host with a fragment's state cut off, a spare on the serving side", "active-standby", "join",
			"  - {at: 1s, for: 320ms, partition: [[J, J.1, J.2, W.2, src, src2, sink], [W, W.1]]}", false, "every host with W's state"},
		{"the state cut off from the sink's group, the groups of equal size", "passive-standby", "repeatable",
			"  - {at: 1s, for: 320ms, partition: [[src, A, A.3, B.2, sink], [A.1, A.2, B, B.1, B.3]]}", false, "off from the sink's group"},
		{"the sink's group a minority, the state with the majority", "passive-standby", "repeatable",
			"  - {at: 1s, for: 320ms, partition: [[src, A, B.2, sink], [A.1, A.2, A.3, B, B.1, B.3]]}", true, ""},
		{"the state cut off with no spare on the serving side", "passive-standby", "convergent",
			"  - {at: 1s, for: 320ms, partition: [[src, A, A.1, C, C.1, sink], [B, B.1]]}", true, ""},
		{"a group cut off, then its fragment fails again too soon", "active-standby", "convergent", "  - {at: 1s, for: 800ms, partition: [[src, A, B], [B.1, C, sink]]}\n  - {at: 2.5s, crash: B.1}", false, "during a recovery"},
		{"a group of adjacent fragments cut off, upstream backup", "upstream-backup", "convergent", "  - {at: 1s, for: 300ms, partition: [[A, B], [A.1, B.1, C, src, sink]]}", false, "adjacent fragments"},
		{"a pair partition across adjacent fragments, upstream backup", "upstream-backup", "convergent", "  - {at: 1s, for: 300ms, partition: [[A], [B]]}", false, "adjacent fragments"},
		{"one host cut off, upstream backup", "upstream-backup", "convergent", "  - {at: 1s, for: 300ms, partition: [[B], [A, A.1, B.1, C, C.1, src, sink]]}", true, ""},
		{"corruption", "passive-standby", "repeatable", "  - {at: 1s, for: 1s, corrupt: {from: A, p: 1}}", false, "corrupted"},
		{"adjacent fragments, upstream backup", "upstream-backup", "convergent", "  - {at: 2s, crash: A}\n  - {at: 2.5s, crash: B}", false, "adjacent fragments"},
		{"adjacent fragments far apart, upstream backup", "upstream-backup", "deterministic", "  - {at: 1s, crash: A}\n  - {at: 3s, crash: B}", false, "adjacent fragments both fail"},
		{"adjacent fragments, active standby", "active-standby", "convergent", "  - {at: 2s, crash: A}\n  - {at: 2.1s, crash: B}", true, ""},
		{"adjacent fragments far apart, active standby", "active-standby", "convergent", "  - {at: 1s, crash: A}\n  - {at: 2.6s, crash: B}", true, ""},
		{"adjacent fragments, passive standby", "passive-standby", "convergent", "  - {at: 2s, crash: A}\n  - {at: 2.5s, crash: B}", true, ""},
		{"adjacent fragments far apart, passive standby", "passive-standby", "convergent", "  - {at: 1s, crash: A}\n  - {at: 2.6s, crash: B}", true, ""},
		{"loss on a union's inputs", "active-standby", "arbitrary", "  - {at: 1s, for: 1s, loss: {p: 0.2}}", false, "changes the order in which its inputs arrive"},
		{"delay from a source into the union", "passive-standby", "arbitrary", "  - {at: 1s, for: 1s, delay: {from: src2, to: A.1, extra: 5ms}}", false, "the union's fragment A"},
		{"partition of a source from the union", "passive-standby", "arbitrary", "  - {at: 1s, for: 100ms, partition: [[src], [A, A.1]]}", false, "between a source and the union's fragment"},
		{"loss after the union", "active-standby", "arbitrary", "  - {at: 1s, for: 1s, loss: {from: A, to: B, p: 0.2}}", true, ""},
		{"a union's crash", "active-standby", "arbitrary", "  - {at: 2s, crash: A}", true, ""},
		{"every host of a fragment", "amnesia", "repeatable", "  - {at: 0.5s, crash: B}\n  - {at: 2s, crash: B.1}\n  - {at: 3.6s, crash: B.2}", false, "every host of B"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, why := soakCase(t, tc.strategy, "", tc.query, tc.faults).InFaultModel()
			assert.Equal(t, tc.in, in, why)
			assert.Contains(t, why, tc.why)
		})
	}
}

// TestPreciseExpected follows the expected-outcome table of docs/semantics.md.
func TestPreciseExpected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		strategy, params, query string
		want                    bool
	}{
		{"amnesia", "", "repeatable", false},
		{"passive-standby", "", "deterministic", true},
		{"passive-standby", "", "arbitrary", false},
		{"passive-standby", "log_nondeterminism: true", "arbitrary", true},
		{"active-standby", "", "join", true},
		{"active-standby", "ship_decisions: true", "arbitrary", true},
		{"upstream-backup", "", "repeatable", false},
		{"upstream-backup", "dedup: true", "deterministic", true},
		{"upstream-backup", "dedup: true, max_tuples: 100", "repeatable", false},
		{"upstream-backup", "dedup: true", "arbitrary", false},
	}
	for _, tc := range cases {
		t.Run(tc.strategy+" "+tc.params+" "+tc.query, func(t *testing.T) {
			got, why := soakCase(t, tc.strategy, tc.params, tc.query, "  - {at: 2s, for: 1s, delay: {extra: 1ms}}").PreciseExpected()
			assert.Equal(t, tc.want, got, why)
			assert.Equal(t, tc.want, why == "")
		})
	}
}

// forcePrecise checks a case as if its strategy promised precise recovery
// within the fault model (amnesia does not: it makes a reliable violation).
func forcePrecise(c *SoakCase) *SoakResult {
	res := &SoakResult{Case: c, PreciseChecked: true}
	res.InModel, res.OutOfModel = c.InFaultModel()
	res.check(SoakEventFactor, soakEventSlack)
	return res
}

// TestCheckSoakCase: the invariants hold for the strategies' own promises,
// and each check fires when its invariant breaks.
func TestCheckSoakCase(t *testing.T) {
	t.Parallel()
	t.Run("passive standby, in model", func(t *testing.T) {
		r := CheckSoakCase(soakCase(t, "passive-standby", "", "convergent", "  - {at: 2s, crash: B}\n  - {at: 1s, for: 1s, delay: {to: C, extra: 30ms}}"))
		assert.Empty(t, r.Violations)
		assert.True(t, r.InModel)
		assert.True(t, r.PreciseChecked)
		assert.Equal(t, "precise", r.Recovery.Type)
		assert.Positive(t, r.Emitted)
		assert.Greater(t, r.Events, r.RefEvents)
	})
	t.Run("precise broken", func(t *testing.T) {
		r := forcePrecise(soakCase(t, "amnesia", "", "convergent", "  - {at: 2s, crash: B}"))
		require.True(t, r.Has(InvPrecise), "%v", r.Violations)
		assert.Contains(t, r.Violations[0].Detail, "gap")
	})
	t.Run("event bound", func(t *testing.T) {
		c := soakCase(t, "active-standby", "", "repeatable", "  - {at: 2s, crash: A}")
		r := &SoakResult{Case: c}
		r.check(1, 0) // active standby needs more events than the no-HA run
		require.True(t, r.Has(InvLivelock), "%v", r.Violations)
		assert.Len(t, r.Violations, 1)
	})
	t.Run("queue bound", func(t *testing.T) {
		r := CheckSoakCase(soakCase(t, "upstream-backup", "max_tuples: 60", "repeatable", "  - {at: 2s, crash: B}"))
		assert.False(t, r.Has(InvQueue), "%v", r.Violations)
		res := &SoakResult{Case: r.Case, Emitted: r.Emitted}
		bound, what := res.queueBound(0)
		assert.EqualValues(t, 60, bound)
		assert.Equal(t, "max_tuples = 60", what)
		res.checkQueues(fakeStats("A", 61), nil)
		assert.True(t, res.Has(InvQueue))
	})
	t.Run("general queue bound grows with takeovers", func(t *testing.T) {
		// Without dedup, upstream backup's successor re-emits its rebuilt
		// history and the hosts downstream retain it as new output.
		r := CheckSoakCase(soakCase(t, "upstream-backup", "dedup: false", "repeatable", "  - {at: 2s, crash: A}"))
		res := &SoakResult{Case: r.Case, Emitted: r.Emitted}
		one, _ := res.queueBound(0)
		two, what := res.queueBound(1)
		assert.Equal(t, 2*one, two)
		assert.Contains(t, what, "one set more per takeover")
		withTakeover := func(peak int64) *ha.Trace {
			return ha.NewTrace(ha.Event{Kind: ha.EvTakeover, Host: "A.1"},
				ha.Event{Kind: ha.EvStats, Host: "B", Stats: &ha.NodeStats{PeakQueue: peak}})
		}
		res.checkQueues(withTakeover(one+1), nil)
		assert.False(t, res.Has(InvQueue), "%v", res.Violations)
		res.checkQueues(withTakeover(two+1), nil)
		assert.True(t, res.Has(InvQueue))
	})
	t.Run("amnesia retains nothing", func(t *testing.T) {
		r := CheckSoakCase(soakCase(t, "amnesia", "", "deterministic", "  - {at: 2s, crash: B}"))
		assert.Empty(t, r.Violations)
		assert.Equal(t, "gap", r.Recovery.Type)
		assert.LessOrEqual(t, r.Recovery.LostInputs, r.LostBound)
	})
}

// TestShrinkSoakCase: shrinking keeps only what the violation needs.
func TestShrinkSoakCase(t *testing.T) {
	t.Parallel()
	c := soakCase(t, "amnesia", "", "repeatable",
		"  - {at: 0.8s, for: 500ms, delay: {extra: 20ms}}\n  - {at: 1.5s, crash: B}\n  - {at: 3s, pause: A, for: 100ms}")
	min, res, runs := shrinkSoakCase(c, InvPrecise, 60, forcePrecise)
	require.True(t, res.Has(InvPrecise))
	require.Len(t, min.Experiment.Faults, 1, "only the crash is needed")
	assert.Equal(t, "B", min.Experiment.Faults[0].Crash)
	assert.Less(t, min.Experiment.Duration, c.Experiment.Duration)
	assert.Less(t, min.Experiment.Source.Rate, c.Experiment.Source.Rate)
	assert.LessOrEqual(t, runs, 60)
	y, err := ReproYAML(min, res)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(y), "# streamha soak failure"))
	_, err = experiment.Parse(y, "repro") // the file runs as it is
	require.NoError(t, err)
	assert.Contains(t, string(y), "violated precise")
}

// TestSoakPasses: a few random runs per strategy break no invariant (the
// CLI and CI run many more).
func TestSoakPasses(t *testing.T) {
	t.Parallel()
	for _, strategy := range SoakStrategies() {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			for run := range uint64(2) {
				c, err := GenerateSoakCase(11, strategy, run)
				require.NoError(t, err)
				r := CheckSoakCase(c)
				y, _ := ReproYAML(c, r)
				require.Empty(t, r.Violations, "%s", y)
			}
		})
	}
}

func buildStrategy(c *SoakCase) (ha.Strategy, error) {
	return strategies.Build(c.Strategy, c.Experiment.ParamsFor(c.Strategy))
}

// fakeStats is a trace with one host's end-of-run counters.
func fakeStats(host string, peakQueue int64) *ha.Trace {
	return ha.NewTrace(ha.Event{Kind: ha.EvStats, Host: host, Stats: &ha.NodeStats{PeakQueue: peakQueue}})
}

// TestCorruptFaultConfig: the corrupt fault (used by the soak and the
// checkpoint-corruption tests) validates its probability and duration.
func TestCorruptFaultConfig(t *testing.T) {
	t.Parallel()
	base := "nodes: [{name: A, ops: [{map: {}}]}]\nsource: {rate: 100, keys: 1}\nfaults:\n"
	cases := []struct {
		fault, err string
	}{
		{"  - {at: 1s, for: 1s, corrupt: {from: A, to: A.1, p: 1}}", ""},
		{"  - {at: 1s, for: 1s, corrupt: {p: 0}}", "corrupt.p"},
		{"  - {at: 1s, for: 1s, corrupt: {p: 1.5}}", "corrupt.p"},
		{"  - {at: 1s, corrupt: {p: 0.5}}", "positive duration"},
		{"  - {at: 1s, for: 1s, corrupt: {from: Z, p: 0.5}}", "unknown node"},
		{"  - {at: 1s, for: 1s, corrupt: {p: 0.5}, crash: A}", "exactly one"},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			e, err := experiment.Parse([]byte(base+tc.fault), "t")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"corrupt A→A.1 p=1 at 1s for 1s"}, e.FaultDescriptions())
		})
	}
}
