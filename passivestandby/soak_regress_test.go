package passivestandby_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
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

// TestBackupLearnsItsRoleFromACheckpoint: B named B.3 its backup while a
// partition took that announcement; B.3 got B's checkpoints all the same.
// After B crashes, B.3 takes over from its checkpoint and the run is
// precise. With the fix undone (announce-once) B.3 waits for the backup
// it last heard of, the others wait for B.3, and nobody takes over — unless
// the bound on that wait (live-candidate-waited, undone too here) passes
// the idle candidate over.
func TestBackupLearnsItsRoleFromACheckpoint(t *testing.T) {
	t.Parallel()
	e, err := experiment.Load("testdata/soak/backup-announcement-lost.yaml")
	require.NoError(t, err)
	ref, err := sim.ReferenceTrace(e)
	require.NoError(t, err)
	out, err := sim.RunPlanted(e, passivestandby.Name, 0)
	require.NoError(t, err)
	rec, _ := metrics.ClassifyRecovery(ref, out.Trace)
	assert.NotEmpty(t, events(out.Trace, ha.EvTakeover, "B.3"), "B.3 takes over")
	assert.Equal(t, "precise", rec.Type, "%v", rec.Explanations)

	out, err = sim.RunPlanted(e, passivestandby.Name, ha.PlantAnnounceOnce|ha.PlantLiveCandidateWaited)
	require.NoError(t, err)
	rec, _ = metrics.ClassifyRecovery(ref, out.Trace)
	assert.Empty(t, events(out.Trace, ha.EvTakeover, ""), "with the fix undone nobody takes over")
	assert.Positive(t, rec.Missing)
}
