package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInFaultModelAdmitsPreciseRuns: schedules the recovery-window rule
// admits because a host with the fragment's state never fails — the same
// host failing again once back, faults on a host already down, a recruited
// spare failing, spares failing before the primary — are in fact precise
// under both standby strategies.
func TestInFaultModelAdmitsPreciseRuns(t *testing.T) {
	t.Parallel()
	schedules := []struct{ name, query, faults string }{
		{"the paused primary crashes once back", "convergent", "  - {at: 1s, pause: B, for: 600ms}\n  - {at: 2.2s, crash: B}"},
		{"the paused primary is paused again once back", "deterministic", "  - {at: 1s, pause: B, for: 400ms}\n  - {at: 1.9s, pause: B, for: 500ms}"},
		{"the secondary cut off twice", "join", "  - {at: 1s, for: 300ms, partition: [[W.1], [J, J.1, J.2, J.3, W, W.2, W.3, src, src2, sink]]}\n" +
			"  - {at: 2s, for: 400ms, partition: [[W.1, J.1], [J, J.2, J.3, W, W.2, W.3, src, src2, sink]]}"},
		{"a crashed primary crashed again, paused too", "repeatable", "  - {at: 1.5s, crash: A}\n  - {at: 1.8s, crash: A}\n  - {at: 2s, pause: A, for: 500ms}"},
		{"the recruited spare crashes", "convergent", "  - {at: 1.5s, crash: B}\n  - {at: 2s, crash: B.2}"},
		{"spares fail, then the primary", "join", "  - {at: 1s, crash: W.2}\n  - {at: 1.2s, pause: W.3, for: 400ms}\n  - {at: 1.5s, crash: W}"},
	}
	for _, strategy := range []string{"passive-standby", "active-standby"} {
		for _, s := range schedules {
			t.Run(strategy+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				res := CheckSoakCase(soakCase(t, strategy, "", s.query, s.faults))
				require.True(t, res.InModel, res.OutOfModel)
				require.True(t, res.PreciseChecked)
				assert.Empty(t, res.Violations)
				assert.Equal(t, "precise", res.Recovery.Type)
			})
		}
	}
}

// TestCorruptionThatCorruptedNothing: a corrupt fault that corrupted no
// message leaves the run exactly as without it, so the precise invariant
// applies; one that corrupted a message keeps the run outside the model.
func TestCorruptionThatCorruptedNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, faults string
		in           bool
	}{
		{"from a spare, which sends no message with a body", "  - {at: 1s, for: 500ms, corrupt: {from: B.3, p: 1}}\n  - {at: 2s, crash: B}", true},
		{"from the primary, which sends checkpoints", "  - {at: 1s, for: 1s, corrupt: {from: B, p: 1}}", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := soakCase(t, "passive-standby", "", "convergent", tc.faults)
			rule, _ := c.OutOfModel()
			require.Equal(t, RuleCorrupt, rule)
			res := CheckSoakCase(c)
			assert.Equal(t, tc.in, res.InModel, res.OutOfModel)
			assert.Equal(t, tc.in, res.PreciseChecked)
			if tc.in {
				assert.Empty(t, res.Violations)
				assert.Empty(t, res.OutsidePromise())
			} else {
				assert.Equal(t, RuleCorrupt, res.OutsidePromise())
			}
		})
	}
}
