package passivestandby_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// corruptNotes returns the backup's notes about checkpoints it found
// unusable, and the simulator's notes about the bytes it flipped.
func corruptNotes(trace *ha.Trace) (detected, injected []ha.Event) {
	for _, e := range trace.Events() {
		if e.Kind != ha.EvNote {
			continue
		}
		switch {
		case strings.HasPrefix(e.Note, "fault: corrupted one byte of a ps.ckpt"):
			injected = append(injected, e)
		case strings.Contains(e.Note, "checksum mismatch"):
			detected = append(detected, e)
		}
	}
	return detected, injected
}

// TestCorruptCheckpoint flips a byte of the checkpoints B sends to its
// backup B.1 (the simulator's corrupt fault) and crashes B. Every damaged
// checkpoint is detected by its checksum and traced; the backup keeps the
// last good one, so recovery stays precise when one exists, and is
// rebuilt by an empty restart when none arrived: a gap if the upstream
// already trimmed what that state reflected, a repeating rollback if not.
func TestCorruptCheckpoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		strategy string
		faults   string
		// wantType is the recovery type; keeping names the note the backup
		// must write for the first damaged checkpoint.
		wantType string
		keeping  string
		backup   string // the host that receives the damaged checkpoints
	}{
		{
			name:     "latest full checkpoints damaged: falls back to the previous good one",
			faults:   "\n  - {at: 2s, for: 2s, corrupt: {from: B, to: B.1, p: 1}}\n  - {at: 3.4s, crash: B}",
			wantType: "precise", keeping: "keeping checkpoint", backup: "B.1",
		},
		{
			name:     "incremental delta damaged: asks for a full one",
			strategy: "mode: incremental, full_every: 5",
			faults:   "\n  - {at: 2s, for: 300ms, corrupt: {from: B, to: B.1, p: 1}}\n  - {at: 3.4s, crash: B}",
			wantType: "precise", keeping: "keeping checkpoint", backup: "B.1",
		},
		{
			// No checkpoint was ever acknowledged, so A never trimmed: the
			// empty restart gets all of A's output again (repeating rollback).
			name:     "every checkpoint damaged from the start: empty restart, full replay",
			faults:   "\n  - {at: 0s, for: 10s, corrupt: {from: B, to: B.1, p: 1}}\n  - {at: 3.4s, crash: B}",
			wantType: "rollback", keeping: "no earlier checkpoint held", backup: "B.1",
		},
		{
			// B.1's checkpoints let A trim; after B.1 fails, every checkpoint
			// to the new backup B.2 is damaged, so B.2 restarts B empty and
			// the state A trimmed away is lost.
			name:     "no good checkpoint at the new backup: gap",
			faults:   "\n  - {at: 0s, for: 10s, corrupt: {from: B, to: B.2, p: 1}}\n  - {at: 1.5s, crash: B.1}\n  - {at: 3.4s, crash: B}",
			wantType: "gap", keeping: "no earlier checkpoint held", backup: "B.2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, exp{strategy: tc.strategy, faults: tc.faults})
			rec := r.Run.Recovery
			detected, injected := corruptNotes(r.Trace)
			require.NotEmpty(t, injected, "the fault damaged checkpoints")
			require.Equal(t, len(injected), len(detected), "every damaged checkpoint is detected: injected %v", injected)
			for _, d := range detected {
				assert.Equal(t, tc.backup, d.Host)
				assert.Contains(t, d.Note, "asking for a full checkpoint")
			}
			assert.Contains(t, detected[0].Note, tc.keeping)
			// A rejected full checkpoint is retried at the next tick (every
			// 200ms), not at once: no checkpoint storm (there were 760 in
			// the last case before that).
			assert.LessOrEqual(t, len(injected), 20)
			// A damaged backup announcement is ignored, so a host still
			// takes over.
			assert.NotEmpty(t, events(r.Trace, ha.EvTakeover, ""))
			if tc.wantType == "precise" {
				requirePrecise(t, rec)
				restores := events(r.Trace, ha.EvRestore, "B.1")
				require.Len(t, restores, 1)
				last, ok := lastBefore(events(r.Trace, ha.EvCheckpointEnd, "B.1"), secs(3.4))
				require.True(t, ok)
				assert.Equal(t, last.Seq, restores[0].Seq, "restored the last checkpoint that passed its checksum")
				return
			}
			require.Equal(t, tc.wantType, rec.Type, rec.Explanations)
			assert.Empty(t, events(r.Trace, ha.EvRestore, ""), "nothing damaged was restored")
			assert.Zero(t, rec.Spurious, "nothing is made up from garbage")
			if tc.wantType == "gap" {
				assert.Positive(t, rec.LostInputs)
			} else {
				assert.Zero(t, rec.LostInputs)
				assert.Positive(t, rec.Duplicates)
			}
		})
	}
}
