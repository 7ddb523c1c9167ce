package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdjacentFailuresUnderUpstreamBackup: upstream backup keeps a
// fragment's state only in its upstream neighbour's queue, so a fragment
// that holds state and its upstream neighbour failing in one run lie
// outside its promise; when the downstream one holds no state (a map)
// nothing is lost that way, and the schedule stays inside.
func TestAdjacentFailuresUnderUpstreamBackup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query, faults string
		in                  bool
	}{
		{"map after map", "repeatable", "  - {at: 2s, crash: A}\n  - {at: 2.01s, crash: B}", true},
		{"map after a window", "convergent", "  - {at: 2s, crash: B}\n  - {at: 2.01s, crash: C}", true},
		{"window after a filter", "convergent", "  - {at: 2s, crash: A}\n  - {at: 2.01s, crash: B}", false},
		{"running sum after a map", "deterministic", "  - {at: 2s, crash: B}\n  - {at: 2.5s, crash: A}", false},
	} {
		in, why := soakCase(t, "upstream-backup", "dedup: true", tc.query, tc.faults).InFaultModel()
		assert.Equal(t, tc.in, in, "%s: %s", tc.name, why)
	}
}
