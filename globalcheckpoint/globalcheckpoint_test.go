package globalcheckpoint_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"
)

// withStrategy is the default experiment with global-checkpoint's
// parameters params ("k: v, k: v") and the default crash of B.
func withStrategy(t *testing.T, params string) *experiment.Experiment {
	t.Helper()
	text := strings.Replace(experiment.DefaultYAML, "faults:",
		fmt.Sprintf("strategy: {name: %s, %s}\nfaults:", globalcheckpoint.Name, params), 1)
	e, err := experiment.Parse([]byte(text), "test")
	require.NoError(t, err)
	return e
}

// run runs the experiment under global-checkpoint and returns its recovery
// and its faulty trace.
func run(t *testing.T, e *experiment.Experiment) (*sim.StrategyRun, *ha.Trace) {
	t.Helper()
	cmp, err := sim.Compare(e, []string{globalcheckpoint.Name})
	require.NoError(t, err)
	require.Len(t, cmp.Runs, 1)
	return &cmp.Runs[0], cmp.Runs[0].Trace
}

// runYAML parses experiment y and runs global-checkpoint on it.
func runYAML(t *testing.T, y string) (*sim.StrategyRun, *ha.Trace) {
	t.Helper()
	e, err := experiment.Parse([]byte(y), t.Name())
	require.NoError(t, err)
	return run(t, e)
}

func TestTransactionalSinkIsPreciseOnTheDefaultExperiment(t *testing.T) {
	sr, tr := run(t, withStrategy(t, "sink: transactional"))
	r := sr.Run.Recovery
	assert.Equal(t, "precise", r.Type, "recovery %+v", r)
	assert.Zero(t, r.Duplicates)
	restores := 0
	for e := range tr.All() {
		if e.Kind == ha.EvRestore {
			restores++
		}
	}
	assert.Equal(t, 3, restores, "every fragment of the chain restarts, not only the failed one")
}

// TestAtLeastOnceRepeatsWhatFollowedTheCheckpoint checks the duplicate
// count against the trace: every output the sink delivered before the
// coordinator decided the rollback with a seq after the last fragment's
// restored output seq is delivered once more, and nothing else is.
func TestAtLeastOnceRepeatsWhatFollowedTheCheckpoint(t *testing.T) {
	for _, iv := range []string{"200ms", "1s"} {
		t.Run(iv, func(t *testing.T) {
			sr, tr := run(t, withStrategy(t, "sink: at-least-once, checkpoint_interval: "+iv))
			last := "C" // the default experiment's last fragment
			// The rollback comes after the deliveries it repeats: find it first.
			var restoredOut uint64
			var rollbackAt time.Duration = -1
			for e := range tr.All() {
				switch {
				case e.Kind == ha.EvNote && e.Host == "sink" && rollbackAt < 0 && strings.Contains(e.Note, "global rollback"):
					rollbackAt = e.T
				case e.Kind == ha.EvRestore && e.Host == last:
					_, err := fmt.Sscanf(e.Note[strings.Index(e.Note, "output seq"):], "output seq %d", &restoredOut)
					require.NoError(t, err, e.Note)
				}
			}
			require.GreaterOrEqual(t, rollbackAt, time.Duration(0), "no rollback")
			since := 0
			for e := range tr.All() {
				if e.Kind == ha.EvDeliver && e.T < rollbackAt && e.Tuple.Seq > restoredOut {
					since++
				}
			}
			r := sr.Run.Recovery
			assert.Equal(t, since, r.Duplicates, "recovery %+v", r)
			if since > 0 {
				assert.Equal(t, "rollback", r.Type)
				assert.Equal(t, "repeating", r.Subtype)
			} else {
				assert.Equal(t, "precise", r.Type)
			}
			assert.Zero(t, r.Missing+r.Wrong+int(r.LostInputs))
		})
	}
}

func TestDefaultIntervalRepeatsOnTheDefaultExperiment(t *testing.T) {
	sr, _ := run(t, withStrategy(t, "sink: at-least-once"))
	r := sr.Run.Recovery
	assert.Equal(t, "rollback", r.Type)
	assert.Equal(t, "repeating", r.Subtype)
	assert.Equal(t, 16, r.Duplicates, "the 16 window outputs emitted after the checkpoint at 10 s")
}

func TestParamsAreCheckedAndDefaulted(t *testing.T) {
	info, err := strategies.Lookup(globalcheckpoint.Name)
	require.NoError(t, err)
	p, err := info.Parse(nil)
	require.NoError(t, err)
	s, err := info.New(p)
	require.NoError(t, err)
	assert.Equal(t, globalcheckpoint.DefaultConfig(), s.(*globalcheckpoint.Strategy).Config())
	for _, c := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"sink": "exactly-once"}, "strategy.sink"},
		{map[string]any{"checkpoint_interval": "soon"}, "strategy.checkpoint_interval"},
		{map[string]any{"checkpoint_interval": "0s"}, "checkpoint_interval: must be at least 1ms"},
		{map[string]any{"mode": "full"}, "strategy.mode: unknown parameter"},
	} {
		_, err := strategies.Build(globalcheckpoint.Name, c.raw)
		require.Error(t, err, "%v", c.raw)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestConformance holds global-checkpoint to the exact claims it
// registers, per sink (strategies.Info.Promise.Claims).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance matrix takes a while")
	}
	info, err := strategies.Lookup(globalcheckpoint.Name)
	require.NoError(t, err)
	require.Len(t, info.Promise.Claims, 2, "one set of claims per sink")
	for _, claims := range info.Promise.Claims {
		require.True(t, claims.Exact)
		t.Run(claims.Params["sink"].(string), func(t *testing.T) { conformance.Run(t, globalcheckpoint.Name, claims) })
	}
}
