package passivestandby_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
)

// TestDefaultExperimentPrecise: the built-in experiment (crash of B at
// 10.4 s) recovers precisely under passive standby.
func TestDefaultExperimentPrecise(t *testing.T) {
	t.Parallel()
	c, err := sim.Compare(experiment.Default(), []string{passivestandby.Name})
	require.NoError(t, err)
	r := c.Runs[0].Run.Recovery
	requirePrecise(t, r)
	require.NotNil(t, r.DetectionMs)
	require.NotNil(t, r.RecoveryMs)
	assert.Less(t, *r.RecoveryMs, 1000.0)
	assert.Positive(t, c.Runs[0].Run.Overhead.CheckpointBytes)
	assert.NotEmpty(t, events(c.Runs[0].Trace, ha.EvRestore, "B.1"), "B.1 restored a checkpoint")
}

// TestCrashAroundCheckpoint crashes the primary of B just before a
// checkpoint, just after one completed at the backup, and while one is being
// transferred over a slow link: the backup restores the latest checkpoint it
// fully received and the recovery is precise in each case.
func TestCrashAroundCheckpoint(t *testing.T) {
	t.Parallel()
	// The state of B is large enough (5000 keys) that a checkpoint takes
	// ~0.5 s over 2 Mbps, longer than the detection of the crash.
	slow := exp{
		source:  "{rate: 2000, keys: 5000}",
		network: "{latency: 1ms, jitter: 100us, bandwidth: 2Mbps}",
	}
	fast := exp{}
	cases := []struct {
		name string
		x    exp
		// crash returns the crash time given the checkpoint k of B nearest
		// 3.4 s (captured at start, complete at the backup at end).
		crash func(start, end time.Duration) time.Duration
		// restored is the checkpoint the backup must restore, relative to k.
		restored int
	}{
		{"just before a checkpoint", fast, func(s, _ time.Duration) time.Duration { return s - time.Millisecond }, -1},
		{"just after a checkpoint", fast, func(_, e time.Duration) time.Duration { return e + time.Millisecond }, 0},
		{"during a checkpoint transfer", slow, func(s, _ time.Duration) time.Duration { return s + 50*time.Millisecond }, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ff := simTrace(t, tc.x, true)
			begin, ok := firstAfter(events(ff, ha.EvCheckpointBeg, "B"), secs(3.3))
			require.True(t, ok)
			var end ha.Event
			for _, e := range events(ff, ha.EvCheckpointEnd, "B.1") {
				if e.Seq == begin.Seq {
					end = e
				}
			}
			require.Equal(t, begin.Seq, end.Seq, "checkpoint %d completes at the backup", begin.Seq)
			at := tc.crash(begin.T, end.T)
			if tc.name == "during a checkpoint transfer" {
				require.Greater(t, end.T-at, 300*time.Millisecond, "the checkpoint is still in flight past the detection (≤ 250 ms)")
			}

			x := tc.x
			x.faults = fmt.Sprintf("\n  - {at: %s, crash: B}", dur(at))
			sr := run(t, x)
			requirePrecise(t, sr.Run.Recovery)

			restores := events(sr.Trace, ha.EvRestore, "B.1")
			require.Len(t, restores, 1)
			assert.Equal(t, int64(begin.Seq)+int64(tc.restored), int64(restores[0].Seq), "restored checkpoint")
			takeover := events(sr.Trace, ha.EvTakeover, "B.1")
			require.Len(t, takeover, 1)
			assert.Greater(t, takeover[0].T, at)
			// A checkpoint still in flight at the takeover is never applied.
			for _, e := range events(sr.Trace, ha.EvCheckpointEnd, "B.1") {
				if e.Peer == "B" {
					assert.LessOrEqual(t, e.T, takeover[0].T)
					assert.LessOrEqual(t, e.Seq, restores[0].Seq)
				}
			}
		})
	}
}

// TestFailures covers failures other than a single crash of a primary.
func TestFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		faults string
		check  func(t *testing.T, trace *ha.Trace)
	}{
		{
			name:   "crash of the first node",
			faults: "\n  - {at: 3.4s, crash: A}",
			check: func(t *testing.T, trace *ha.Trace) {
				require.Len(t, events(trace, ha.EvRestore, "A.1"), 1)
				replays := events(trace, ha.EvReplayStart, "src")
				require.NotEmpty(t, replays)
				assert.Positive(t, replays[0].N, "the source replays what followed the checkpoint")
			},
		},
		{
			name:   "crash of the backup",
			faults: "\n  - {at: 3.4s, crash: B.1}",
			check: func(t *testing.T, trace *ha.Trace) {
				assert.Empty(t, events(trace, ha.EvTakeover, ""), "the primary keeps serving")
				var noted bool
				for _, e := range events(trace, ha.EvNote, "B") {
					noted = noted || e.Peer == "B.2"
				}
				assert.True(t, noted, "B announces B.2 as its new backup")
				ends, ok := firstAfter(events(trace, ha.EvCheckpointEnd, "B.2"), secs(3.4))
				require.True(t, ok, "B.2 holds checkpoints of B")
				assert.Equal(t, "B", ends.Peer)
			},
		},
		{
			name:   "crash of the primary then of the new primary",
			faults: "\n  - {at: 3s, crash: B}\n  - {at: 4.1s, crash: B.1}",
			check: func(t *testing.T, trace *ha.Trace) {
				tk := events(trace, ha.EvTakeover, "")
				require.Len(t, tk, 2)
				assert.Equal(t, "B.1", tk[0].Host)
				assert.Equal(t, "B.2", tk[1].Host)
				assert.Equal(t, uint64(2), tk[1].Epoch)
				r := events(trace, ha.EvRestore, "B.2")
				require.Len(t, r, 1)
				assert.Equal(t, "B.1", r[0].Peer, "B.2 restores a checkpoint of B.1")
			},
		},
		{
			name:   "pause of the primary past the detection timeout",
			faults: "\n  - {at: 3.4s, pause: B, for: 1s}",
			check: func(t *testing.T, trace *ha.Trace) {
				tk := events(trace, ha.EvTakeover, "")
				require.Len(t, tk, 1)
				assert.Equal(t, "B.1", tk[0].Host)
				var fencedSelf, dropped bool
				for _, e := range events(trace, ha.EvFenced, "") {
					fencedSelf = fencedSelf || (e.Host == "B" && e.Peer == "B.1")
					dropped = dropped || (e.Host == "C" && e.Peer == "B" && e.N > 0)
				}
				assert.True(t, fencedSelf, "B learns it was superseded")
				assert.True(t, dropped, "C drops the output B produced after resuming")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sr := run(t, exp{faults: tc.faults})
			requirePrecise(t, sr.Run.Recovery)
			tc.check(t, sr.Trace)
		})
	}
}

// TestNoBackupLeft: when the primary and its backup fail together, the next
// host in line has no checkpoint; it restarts empty, says so, and the
// recovery is a gap.
func TestNoBackupLeft(t *testing.T) {
	t.Parallel()
	sr := run(t, exp{spares: 1, faults: "\n  - {at: 3.4s, crash: B}\n  - {at: 3.4s, crash: B.1}"})
	r := sr.Run.Recovery
	require.Equal(t, "gap", r.Type)
	assert.Positive(t, r.LostInputs)
	tk := events(sr.Trace, ha.EvTakeover, "")
	require.Len(t, tk, 1)
	assert.Equal(t, "B.2", tk[0].Host)
	assert.Empty(t, events(sr.Trace, ha.EvRestore, ""))
	var noted bool
	for _, e := range events(sr.Trace, ha.EvNote, "B.2") {
		noted = noted || e.Note == "backup B.1 of B failed too: restarting with empty state (expect a gap)"
	}
	assert.True(t, noted, "B.2 traces why it restarts empty")
}

// TestDeterministic: the same experiment and seed give the same trace.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	x := exp{strategy: "mode: incremental, full_every: 3", faults: "\n  - {at: 3.4s, crash: B}"}
	a, b := simTrace(t, x, false), simTrace(t, x, false)
	require.NotEmpty(t, events(a, ha.EvRestore, "B.1"))
	require.Equal(t, a, b)
	x.seed = 2
	require.NotEqual(t, a, simTrace(t, x, false))
}
