package ha

// Planted bugs 32–39: liveness after corrupted decisions, crashes of half
// the deployment, takeover orders that differ, restarted numberings, an
// election's queries while an empty restart settles, stale probe answers
// after a pause and a global rollback's restore targets (each undoes the
// fix named).
const (
	// PlantImpossibleDecisionWaits undoes the end of decision following
	// at a decision no input can satisfy (drainPending): a decision byte
	// damaged on its way names a port the node does not have, or a port
	// whose stream ended, and the node holds every later input behind it
	// for good.
	PlantImpossibleDecisionWaits Planted = 1 << 32
	// PlantMinorityChainWaits undoes the takeover on a connected
	// neighbour's word (node_deathword.go): after crashes of half the
	// deployment or more no host sees a majority again, and two adjacent
	// fragments that both lost their primary each wait for the other's
	// primary to answer a probe, for good.
	PlantMinorityChainWaits Planted = 1 << 33
	// PlantLiveCandidateWaited undoes the bound on waiting for a live
	// candidate that never takes over (node_candwait.go): hosts whose
	// takeover orders differ (a backup announcement lost to some) each
	// wait for another, for good.
	PlantLiveCandidateWaited Planted = 1 << 34
	// PlantStaleNumberingKept undoes the reset of an input position that
	// counts in an upstream's older numbering (node_numbering.go): a
	// backup that restores its primary's position after the upstream
	// restarted empty drops the upstream's new output as duplicates.
	PlantStaleNumberingKept Planted = 1 << 35
	// PlantSettleRequeries undoes the quiet of an election whose empty
	// restart waits for its view to settle (emptySettling): it asks its
	// re-check and probe again on every message meanwhile, a loop of
	// queries and answers.
	PlantSettleRequeries Planted = 1 << 36
	// PlantStaleWordHeard undoes the rule that only a timely route
	// answers a probe, and that a probe whose settle time passed long ago
	// is made again (heardSide, elect): a host resuming from a pause takes
	// its old probe's answers, its neighbours' data sent before a
	// partition and its view from before the pause as current, and takes
	// over from a minority island while its primary serves the majority.
	PlantStaleWordHeard Planted = 1 << 37
	// PlantSuspectNeverTarget undoes the use of the replaced coordinator
	// as a global rollback's restore target when it is its fragment's
	// only live host (globalcheckpoint/coordinator.go): the rollback waits
	// for another host of that fragment for good.
	PlantSuspectNeverTarget Planted = 1 << 38
	// PlantUnboundedHold undoes the bound on a hold for a new downstream
	// primary's resume (node_holdbound.go): when the two fragments' takeovers
	// cross, the resume goes to the old upstream primary and the new one
	// holds its output for good.
	PlantUnboundedHold Planted = 1 << 39
)

func init() {
	plantedNames[PlantImpossibleDecisionWaits] = "impossible-decision-waits"
	plantedNames[PlantMinorityChainWaits] = "minority-chain-waits"
	plantedNames[PlantLiveCandidateWaited] = "live-candidate-waited"
	plantedNames[PlantStaleNumberingKept] = "stale-numbering-kept"
	plantedNames[PlantSettleRequeries] = "settle-requeries"
	plantedNames[PlantStaleWordHeard] = "stale-word-heard"
	plantedNames[PlantSuspectNeverTarget] = "suspect-never-target"
	plantedNames[PlantUnboundedHold] = "unbounded-hold"
}
