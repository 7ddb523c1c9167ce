package ha

// Planted bugs 28–39: end-of-stream repair, takeover storms, a union's
// decisions after a takeover (each undoes the fix named).
const (
	// PlantNoEndRepair undoes end-of-stream repair (node_end.go): no
	// end-tail markers, no acknowledgements, and a replay without retained
	// output loses the end.
	PlantNoEndRepair Planted = 1 << 28
	// PlantTakeoverStorm undoes the takeover re-check (node_recheck.go): a
	// host takes over on a declaration of death older than the route it
	// fences.
	PlantTakeoverStorm Planted = 1 << 29
	// PlantZombieDecisions undoes active standby's decision grace: a new
	// primary of a union with ship_decisions interleaves its held input at
	// once, ignoring the decisions its predecessor still ships.
	PlantZombieDecisions Planted = 1 << 30
	// PlantLostIncomplete undoes upstream backup's repeated incomplete
	// bound: a new primary tells it only to the downstream primary it
	// knows when it learns it, so a downstream that failed too never
	// drops the rebuilt windows' partial results.
	PlantLostIncomplete Planted = 1 << 31
)

func init() {
	plantedNames[PlantNoEndRepair] = "no-end-repair"
	plantedNames[PlantTakeoverStorm] = "takeover-storm"
	plantedNames[PlantZombieDecisions] = "zombie-decisions"
	plantedNames[PlantLostIncomplete] = "lost-incomplete-bound"
}
