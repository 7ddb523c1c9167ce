package activestandby_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/activestandby"
	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// TestMinorityPrimaryKeepsItsUpstream: partitions that cut the primaries
// (often with the source) off from every secondary and the sink. A
// secondary takes over on the majority side from its position at the cut;
// the primaries on the minority side keep their secondaries in their
// routes and withhold their acknowledgements, so the upstream still holds
// what the successor asks for after the heal: precise. With the fix undone
// (minority-acks) the upstream trims it: a gap.
func TestMinorityPrimaryKeepsItsUpstream(t *testing.T) {
	t.Parallel()
	for file, bug := range map[string]ha.Planted{
		// A probe no side answered is sent again (ha.PlantSilenceDecides):
		// undone too, the island's secondaries take over on their view.
		"active-primaries-island-keeps-upstream.yaml":         ha.PlantMinorityAcks | ha.PlantSilenceDecides,
		"active-primaries-island-keeps-upstream-sliding.yaml": ha.PlantMinorityAcks,
		// With two cuts the primary also sees an input's primary dead, and
		// withholds its acknowledgements for that too (ha.PlantAckWhileInputCut).
		"active-primaries-island-keeps-upstream-two-cuts.yaml": ha.PlantMinorityAcks | ha.PlantAckWhileInputCut,
		// A join in an island with one of its sources also counts its
		// upstream side as cut (ha.PlantOneInputProbe) and probes again
		// when no side answers (ha.PlantSilenceDecides).
		"active-primaries-island-keeps-upstream-join.yaml": ha.PlantMinorityAcks | ha.PlantOneInputProbe | ha.PlantSilenceDecides,
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			e, err := experiment.Load("../sim/testdata/regress/" + file)
			require.NoError(t, err)
			ref, err := sim.ReferenceTrace(e)
			require.NoError(t, err)
			out, err := sim.RunPlanted(e, activestandby.Name, 0)
			require.NoError(t, err)
			rec, _ := metrics.ClassifyRecovery(ref, out.Trace)
			assert.Equal(t, "precise", rec.Type, "%v", rec.Explanations)

			out, err = sim.RunPlanted(e, activestandby.Name, bug)
			require.NoError(t, err)
			rec, _ = metrics.ClassifyRecovery(ref, out.Trace)
			assert.Equal(t, "gap", rec.Type, "with the fix undone the upstream trims what the successor needs")
			assert.Positive(t, rec.LostInputs)
		})
	}
}
