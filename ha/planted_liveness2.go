package ha

// Planted bugs 32–39: liveness after corrupted decisions, crashes of half
// the deployment, takeover orders that differ and restarted numberings
// (each undoes the fix named).
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
)

func init() {
	plantedNames[PlantImpossibleDecisionWaits] = "impossible-decision-waits"
	plantedNames[PlantMinorityChainWaits] = "minority-chain-waits"
	plantedNames[PlantLiveCandidateWaited] = "live-candidate-waited"
}
