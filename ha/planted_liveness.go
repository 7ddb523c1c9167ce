package ha

// Planted bugs 56–59: liveness after adjacent failures, group partitions
// and rollbacks (each undoes the fix named). The repeated route query and
// the rollback epochs are undone by route-asked-once and rollback-epoch-local
// (planted_precise.go).
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
)

func init() {
	plantedNames[PlantStaleHold] = "stale-hold"
	plantedNames[PlantDedupByID] = "dedup-by-id"
	plantedNames[PlantHoldForToldRoute] = "hold-for-told-route"
	plantedNames[PlantFreshDropsHeld] = "fresh-drops-held"
}
