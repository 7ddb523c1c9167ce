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
)

func init() {
	plantedNames[PlantImpossibleDecisionWaits] = "impossible-decision-waits"
}
