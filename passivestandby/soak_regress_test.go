package passivestandby_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
)

// Regression tests for failures found by `streamha soak` (docs/reliability.md).

// TestShortFalseSuspicionOfDownstream: A pauses a little longer than the
// source's detection but resumes before its backup declares it dead, so
// nobody takes over. The source skipped A while it believed A dead; it must
// resend that output when A is seen alive again (it used to be lost: gap).
func TestShortFalseSuspicionOfDownstream(t *testing.T) {
	t.Parallel()
	for _, pause := range []string{"210ms", "220ms", "240ms"} {
		t.Run(pause, func(t *testing.T) {
			t.Parallel()
			r := run(t, exp{
				seed:     1941550,
				source:   "{rate: 100, keys: 4, arrival: poisson}",
				nodes:    "\n  - {name: A, ops: [{map: {scale: 1}}, {running_sum: {}}]}\n  - {name: B, ops: [{map: {scale: 1}}]}",
				network:  "{latency: 1ms, jitter: 300us, bandwidth: 1Gbps}",
				strategy: "mode: incremental, full_every: 2, async: true",
				duration: "2.5s",
				faults:   "\n  - {at: 2s, for: " + pause + ", pause: A}",
			})
			requirePrecise(t, r.Run.Recovery)
		})
	}
}

// TestBackupTakeoverAfterDownstreamTakeover: W crashes and W.1 takes over,
// asking J (the primary upstream) to resume; J.1, J's backup, must not hold
// its output for that resume request, which was never addressed to it.
// After J crashes too, J.1 used to keep its output from W.1 for good: gap.
func TestBackupTakeoverAfterDownstreamTakeover(t *testing.T) {
	t.Parallel()
	r := run(t, exp{
		seed:     2030075538,
		source:   "{rate: 100, keys: 16, streams: 2}",
		nodes:    "\n  - {name: J, ops: [{join: {window: 300ms}}]}\n  - {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}",
		network:  "{latency: 1ms, jitter: 300us, bandwidth: 1Gbps}",
		strategy: "mode: incremental, full_every: 1",
		duration: "3s",
		faults:   "\n  - {at: 1.14s, crash: W}\n  - {at: 2.39s, crash: J}",
	})
	requirePrecise(t, r.Run.Recovery)
}

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
			e, err := sim.Load(f)
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
