package sim

import (
	"github.com/streamha/streamha/experiment"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnitFloatIsFloat64: a link's draws are the ones Seeded's Float64
// gives, so that runs stay the same.
func TestUnitFloatIsFloat64(t *testing.T) {
	r, p := experiment.Seeded(7, "link", "A", "B"), experiment.SeededPCG(7, "link", "A", "B")
	for i := range 1000 {
		require.Equal(t, r.Float64(), unitFloat(p), "draw %d", i)
	}
}
