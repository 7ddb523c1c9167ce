package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoakLostBoundedOnJoins: on a join, where lineage counts every pair a
// tuple joins, a crash that loses the join's windows reports lost inputs
// that are distinct source tuples, never more than the sources emitted; the
// soak's lost-bounded invariant holds at each crash time.
func TestSoakLostBoundedOnJoins(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"1.1s", "2.3s", "3.6s"} {
		t.Run("amnesia crash J at "+at, func(t *testing.T) {
			r := CheckSoakCase(soakCase(t, "amnesia", "", "join", "  - {at: "+at+", crash: J}"))
			require.False(t, r.Has(InvPanic), "%v", r.Violations)
			assert.False(t, r.Has(InvLost), "%v", r.Violations)
			assert.Equal(t, "gap", r.Recovery.Type, "amnesia loses the join's open windows")
			assert.Positive(t, r.Recovery.LostInputs)
			assert.LessOrEqual(t, r.Recovery.LostInputs, r.Emitted)
			assert.GreaterOrEqual(t, r.Recovery.LostLineage, r.Recovery.LostInputs, "the lineage-weighted figure counts each pair a lost tuple was in")
		})
	}
}
