package ha

// Planted bugs 60–63: precise recovery of the standby strategies inside
// their fault model (each undoes the fix named).
const (
	// PlantOneSidedProbe undoes what a takeover's probe needs to hear
	// (node_elect.go, node_converge.go): any message from either side
	// asked confirms it — the downstream alone when the upstream primary
	// was declared dead and not asked, a spare of a neighbour fragment,
	// a primary cut off on its far side —, so a backup in a minority
	// island takes over with lagging state while the primary serves on.
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
	// PlantAnnounceOnce undoes a passive-standby backup's learning that it
	// is the backup from the checkpoints it receives: it learns it only
	// from its primary's announcement, so when a partition took the
	// announcement nobody takes over after the primary crashes.
	PlantAnnounceOnce Planted = 1 << 63
	// PlantRouteAskedOnce undoes the repeated route query (askRoute): a
	// host that drops data of a newer epoch than it knows asks its sender
	// for the route once per epoch only, so when loss takes that question
	// or its answer it drops the new primary's output for good.
	PlantRouteAskedOnce Planted = 1 << 52
)

func init() {
	plantedNames[PlantOneSidedProbe] = "one-sided-probe"
	plantedNames[PlantMinorityDeathTrusted] = "minority-death-trusted"
	plantedNames[PlantRollbackEpochLocal] = "rollback-epoch-local"
	plantedNames[PlantAnnounceOnce] = "announce-once"
	plantedNames[PlantRouteAskedOnce] = "route-asked-once"
}
