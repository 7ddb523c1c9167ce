package ha

// Planted bugs 60–63: precise recovery of the standby strategies inside
// their fault model (each undoes the fix named).
const (
	// PlantOneSidedProbe undoes the two-sided probe (node_elect.go): a
	// host elected to take over whose upstream primary it declared dead
	// probes its downstream alone, and that one answer confirms the
	// takeover, so a backup in a minority island beside the downstream
	// takes over with lagging state while the primary serves on.
	PlantOneSidedProbe Planted = 1 << 60
	// PlantMinorityDeathTrusted undoes the question a host asks its
	// primary before it takes over when it declared that primary dead on a
	// minority view (node_askprimary.go): after a heal, a backup that sees
	// the majority back before its primary takes over from the primary
	// that served all along, with older state.
	PlantMinorityDeathTrusted Planted = 1 << 61
	// PlantRollbackEpochLocal undoes the least epoch a global rollback's
	// takeover takes (its generation; globalcheckpoint): a host paused
	// while an older rollback was ordered executes it on resume at the
	// same epoch as the host a newer rollback restarted, wins the tie,
	// and runs a generation nobody else does: output stalls for good.
	PlantRollbackEpochLocal Planted = 1 << 62
	// PlantIslandProbe undoes the far-side flag of probe answers
	// (node_converge.go, farSideCut): a backup in an island with its
	// upstream and downstream primaries but neither the sources nor the
	// sink takes over on their answers and fences the primary that kept
	// serving.
	PlantIslandProbe Planted = 1 << 63
)

func init() {
	plantedNames[PlantOneSidedProbe] = "one-sided-probe"
	plantedNames[PlantMinorityDeathTrusted] = "minority-death-trusted"
	plantedNames[PlantRollbackEpochLocal] = "rollback-epoch-local"
	plantedNames[PlantIslandProbe] = "island-probe"
}
