package ha

// Planted bugs 48–49 and 6–9: a backup cut from its primary and upstream
// alone, a join cut from one of its sources, a union's outputs sent before
// its secondaries hold their decisions, and a backup cut from its primary
// and downstream, a join's backup beside one source, and a host alone in a
// partition whose probe nobody answered (each undoes the fix named).
const (
	// PlantViewOverNeighbour undoes the wait of a one-sided probe while the
	// connected neighbour's primary still sees this fragment's primary alive
	// (node_deathword.go): a backup cut off from its primary and upstream
	// alone sees a majority alive, takes over on that view, and after the
	// heal fences the primary that served and asks for input trimmed
	// meanwhile.
	PlantViewOverNeighbour Planted = 1 << 48
	// PlantAckWhileInputCut undoes the acknowledgements a primary withholds
	// while one of its inputs' primaries is declared dead (inputCut): a
	// join split from one source keeps acknowledging the other, which
	// trims what the successor on the far side needs after the heal.
	PlantAckWhileInputCut Planted = 1 << 49
	// PlantUncommittedDecisions undoes active standby's output commit on a
	// union with ship_decisions (activestandby/commit.go): an output leaves
	// before the secondaries hold its decisions, loss takes the decisions,
	// and after the primary's crash the successor's different outputs at
	// those seqs are dropped as duplicates.
	PlantUncommittedDecisions Planted = 1 << 6
	// PlantAliveWordForgotten undoes the weight of a neighbour's word that
	// the primary lives against a probe answered later from both sides
	// (node_deathword.go, wordSaysAlive): a backup cut off from its primary
	// and downstream takes over, with its old checkpoint, when the cut from
	// the downstream heals first.
	PlantAliveWordForgotten Planted = 1 << 7
	// PlantOneInputProbe undoes the upstream side of a probe counting as
	// cut when the primary of any input is declared dead (probeSidesNow):
	// a join's backup beside one source and the downstream takes over while
	// the primary serves with the other source.
	PlantOneInputProbe Planted = 1 << 8
	// PlantSilenceDecides undoes the new probe of an election whose probe
	// no side answered (heardNoSide): a host alone in a partition, its
	// detector still declaring the others dead one by one, takes over on a
	// view that counts most of them alive.
	PlantSilenceDecides Planted = 1 << 9
)

func init() {
	plantedNames[PlantViewOverNeighbour] = "view-over-neighbour"
	plantedNames[PlantAckWhileInputCut] = "ack-while-input-cut"
	plantedNames[PlantUncommittedDecisions] = "uncommitted-decisions"
	plantedNames[PlantAliveWordForgotten] = "alive-word-forgotten"
	plantedNames[PlantOneInputProbe] = "one-input-probe"
	plantedNames[PlantSilenceDecides] = "silence-decides"
}
