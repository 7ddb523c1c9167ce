package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// TestPartialCutsNeedTheirFixes runs the regressions of partial partitions
// (only some links cut, so both sides see a majority) with the fix that
// guards each undone: the standby strategy then loses input, and with the
// fix it is precise (TestRegressions).
func TestPartialCutsNeedTheirFixes(t *testing.T) {
	for _, tc := range []struct {
		file, strategy string
		bug            ha.Planted
	}{
		{"active-backup-cut-from-primary-and-upstream.yaml", "active-standby", ha.PlantViewOverNeighbour},
		{"active-join-split-by-partial-cut.yaml", "active-standby", ha.PlantAckWhileInputCut},
		{"passive-backup-cut-from-primary-and-downstream.yaml", "passive-standby", ha.PlantAliveWordForgotten},
		{"passive-alone-in-partition-silent-probe.yaml", "passive-standby", ha.PlantSilenceDecides},
		{"backup-cut-from-both-neighbours-and-primary.yaml", "active-standby", ha.PlantSilenceDecides},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "regress", tc.file)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			e, err := experiment.Parse(b, path)
			require.NoError(t, err)
			_, ref, err := sim.Reference(e)
			require.NoError(t, err)
			for _, p := range []ha.Planted{ha.PlantNone, tc.bug} {
				out, err := sim.RunPlanted(e, tc.strategy, p)
				require.NoError(t, err)
				r := metrics.RecoveryOf(ref.Trace, out.Trace)
				if p == ha.PlantNone {
					assert.Equal(t, "precise", r.Type, "with the fix")
					continue
				}
				assert.Positive(t, r.LostInputs, "with %s planted, the upstream trims what the successor needs", p)
			}
		})
	}
}
