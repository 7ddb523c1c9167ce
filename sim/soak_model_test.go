package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInFaultModelAdmitsPreciseRuns: schedules the recovery-window rule
// admits because a host with the fragment's state never fails — the same
// host failing again once back, a recruited spare failing, spares failing
// before the primary — are in fact precise under both standby strategies.
func TestInFaultModelAdmitsPreciseRuns(t *testing.T) {
	t.Parallel()
	schedules := []struct{ name, query, faults string }{
		{"the paused primary crashes once back", "convergent", "  - {at: 1s, pause: B, for: 600ms}\n  - {at: 2.2s, crash: B}"},
		{"the paused primary is paused again once back", "deterministic", "  - {at: 1s, pause: B, for: 400ms}\n  - {at: 1.9s, pause: B, for: 500ms}"},
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
