package ha

// Planted bugs 52, 54 and 56–59: liveness after adjacent failures, group
// partitions, loss and rollbacks (each undoes the fix named).
const (
	// PlantStaleHold undoes the reset of output holds at a takeover
	// (TakeOver): a host that held its output for a new downstream
	// primary while it was primary, was fenced before that primary's
	// resume came (the resume went to its successor), and takes its
	// fragment over again later keeps holding its output for that
	// resume, which never comes.
	PlantStaleHold Planted = 1 << 56
	// PlantDedupByID undoes upstream backup's de-duplication by id and
	// event time (upstreambackup/records.go): an output is dropped when
	// its id alone was received, so a replacement that rebuilt its state
	// from a shorter history (its upstream failed too) has its new outputs
	// dropped under the ids they share with old ones, and a key's output
	// stalls until its count passes the old one.
	PlantDedupByID Planted = 1 << 57
	// PlantHoldForToldRoute undoes the rule that only a takeover's
	// announcement starts a hold (onRoute): a primary that learns its
	// downstream fragment's primary late, from a route told or an answer
	// to its route query (after a heal, the new primary long caught up),
	// holds its output for a resume that was sent to another host and
	// answered there.
	PlantHoldForToldRoute Planted = 1 << 58
	// PlantFreshDropsHeld undoes takeHeldBefore (node_repair.go): a host
	// that restarted empty and held its live input until the upstream's
	// first replay answered drops the held tuples the replay's start
	// passes over — under amnesia, whose upstream retains nothing, every
	// tuple that arrived while the resume was on its way.
	PlantFreshDropsHeld Planted = 1 << 59
	// PlantRouteAskedOnce undoes the repeated route query (askRoute): a
	// node that drops data of an epoch it does not know asks the sender
	// for its route once per epoch, and when the query or its answer is
	// lost it drops the new primary's data to the end of the run.
	PlantRouteAskedOnce Planted = 1 << 54
	// PlantRollbackEpochLocal undoes global checkpoint's rollback epochs
	// (globalcheckpoint/hooks.go): a host that restores for a rollback
	// takes its fragment over at the epoch after the one it knows, so a
	// host paused through a newer rollback restores for the older one
	// when it resumes, ties with the newer restart's epoch and fences it;
	// checkpoints then never complete and the sink releases nothing.
	PlantRollbackEpochLocal Planted = 1 << 52
)

func init() {
	plantedNames[PlantStaleHold] = "stale-hold"
	plantedNames[PlantDedupByID] = "dedup-by-id"
	plantedNames[PlantHoldForToldRoute] = "hold-for-told-route"
	plantedNames[PlantFreshDropsHeld] = "fresh-drops-held"
	plantedNames[PlantRouteAskedOnce] = "route-asked-once"
	plantedNames[PlantRollbackEpochLocal] = "rollback-epoch-local"
}
