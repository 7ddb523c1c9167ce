package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInFaultModelAdmitsPreciseRuns: schedules the recovery-window rule
// admits because a host with the fragment's state never fails — the same
// host failing again once back, faults on a host already down — are in
// fact precise under both standby strategies.
func TestInFaultModelAdmitsPreciseRuns(t *testing.T) {
	t.Parallel()
	schedules := []struct{ name, query, faults string }{
		{"the paused primary crashes once back", "convergent", "  - {at: 1s, pause: B, for: 600ms}\n  - {at: 2.2s, crash: B}"},
		{"the paused primary is paused again once back", "deterministic", "  - {at: 1s, pause: B, for: 400ms}\n  - {at: 1.9s, pause: B, for: 500ms}"},
		{"the secondary cut off twice", "join", "  - {at: 1s, for: 300ms, partition: [[W.1], [J, J.1, J.2, J.3, W, W.2, W.3, src, src2, sink]]}\n" +
			"  - {at: 2s, for: 400ms, partition: [[W.1, J.1], [J, J.2, J.3, W, W.2, W.3, src, src2, sink]]}"},
		{"a crashed primary crashed again, paused too", "repeatable", "  - {at: 1.5s, crash: A}\n  - {at: 1.8s, crash: A}\n  - {at: 2s, pause: A, for: 500ms}"},
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
