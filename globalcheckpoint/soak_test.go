package globalcheckpoint_test

import (
	"maps"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/sim"
)

// TestSoakKeepsThePromise runs random soak cases (queries, 1–4 faults of
// every kind) with random parameters drawn by SoakParams, checks the
// soak's invariants, and, for cases inside the fault model, the
// strategy's promise per query class and sink: precise, repeating (no
// input lost, nothing missing or wrong), or divergent (no input lost).
// GC_SOAK_RUNS sets the number of runs (default 50); GC_SOAK_DEFAULTS=1
// keeps the parameters `streamha soak` draws for the case instead.
func TestSoakKeepsThePromise(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 15
	}
	if v, err := strconv.Atoi(os.Getenv("GC_SOAK_RUNS")); err == nil && v > 0 {
		runs = v
	}
	checked := 0
	for run := uint64(0); run < uint64(runs); run++ {
		c, err := sim.GenerateSoakCase(1, globalcheckpoint.Name, run)
		require.NoError(t, err)
		// The soak's own draw (strategies.Info.Soak), as streamha soak runs it.
		params := map[string]any{"sink": globalcheckpoint.DefaultSink}
		maps.Copy(params, c.Experiment.ParamsFor(globalcheckpoint.Name))
		if os.Getenv("GC_SOAK_DEFAULTS") != "1" {
			r := experiment.Seeded(1, "gc-soak-params", strconv.FormatUint(run, 10))
			params = globalcheckpoint.SoakParams(r.IntN)
			c.Experiment.Strategy = experiment.StrategyConfig{Name: globalcheckpoint.Name, Params: params}
			c.Experiment.Strategies = nil
		}
		res := sim.CheckSoakCase(c)
		for _, v := range res.Violations {
			t.Errorf("%s (%s, %v): %s: %s", c.ID(), c.Query, params, v.Invariant, v.Detail)
		}
		if ok, _ := c.InFaultModel(); !ok || res.Failed() {
			continue
		}
		checked++
		rec := res.Recovery
		promise := globalcheckpoint.Promise(c.Experiment.QueryClass(), params["sink"].(string))
		ex := rec.Explanations
		if len(ex) > 2 {
			ex = ex[:2]
		}
		ctx := []any{"%s (%s, %v): promise %s, got %s %s (%d missing, %d dup, %d wrong): %v", c.ID(), c.Query, params, promise,
			rec.Type, rec.Subtype, rec.Missing, rec.Duplicates, rec.Wrong, ex}
		assert.Zero(t, rec.LostInputs, ctx...)
		assert.Zero(t, rec.Missing, ctx...)
		switch promise {
		case "precise":
			assert.Equal(t, "precise", rec.Type, ctx...)
		case "repeating":
			assert.Zero(t, rec.Wrong+rec.Spurious, ctx...)
		}
	}
	assert.Positive(t, checked)
}
