package passivestandby_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
)

// Regression tests for failures found by `streamha soak` (docs/reliability.md)
// that check more than an outcome; those that check only the outcome are
// experiment files under sim/testdata/regress.

// TestUnionOutputCommit replays soak cases of a union with logged
// decisions in which the downstream kept outputs that A.1 could not
// rebuild: A crashing right after its messages were lost, A resuming from
// a pause as A.1 took over, decisions and their replacing checkpoint lost.
// A.1 takes over and no output is missing, repeated or spurious, no input
// lost (values may differ: A.1 interleaves the input A never processed by
// its own arrival).
func TestUnionOutputCommit(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/soak/union-*.yaml")
	require.NoError(t, err)
	require.Len(t, files, 3)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			e, err := experiment.Load(f)
			require.NoError(t, err)
			c, err := sim.Compare(e, []string{passivestandby.Name})
			require.NoError(t, err)
			rec := c.Runs[0].Run.Recovery
			assert.NotEmpty(t, events(c.Runs[0].Trace, ha.EvTakeover, "A.1"), "the schedule makes A.1 take over")
			assert.Zero(t, rec.Missing+rec.Duplicates+rec.Spurious, "%v", rec.Explanations)
			assert.Zero(t, rec.LostInputs, "%v", rec.Explanations)
		})
	}
}
