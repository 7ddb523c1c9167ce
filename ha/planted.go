package ha

import (
	"fmt"
	"slices"
	"strings"
)

// Planted is a set of protocol bugs that earlier versions had and that are
// put back on purpose, one switch each, so the soak's self-test can show
// that the soak finds every one of them (a soak that cannot find a planted
// bug is no check). Production code never sets it: experiments have no
// field for it; only tests and `streamha soak --plant` (hidden) do.
type Planted uint64

// The planted bugs. Each names the fix it undoes; a fix that adds a switch
// adds its name to plantedNames too.
const (
	// PlantNone plants nothing.
	PlantNone Planted = 0
	// PlantNoCatchUpMerge: a two-input fragment that takes over delivers
	// its two replays in arrival order, not merged by event time
	// (node_merge.go), so a window behind a union drops replayed tuples as
	// late.
	PlantNoCatchUpMerge Planted = 1 << 1
	// PlantNoRouteSeek: a host whose neighbour fragment's primary is
	// declared dead never asks for the fragment's new route
	// (node_route.go), so a lost route announcement cuts it off.
	PlantNoRouteSeek Planted = 1 << 2
	// PlantReplayKeepsHold: a replay does not end the hold on live output
	// for a new downstream primary (node_output.go); only its resume does,
	// so a lost resume holds the output for good.
	PlantReplayKeepsHold Planted = 1 << 3
	// PlantOldRepairBlocksNewGap: while a repair is pending (its end
	// marker lost), a gap at a new position is not asked for
	// (node_repair.go).
	PlantOldRepairBlocksNewGap Planted = 1 << 4
	// PlantReceiverChangeRaisesEpoch: a primary that replaces its
	// receivers raises its route's epoch instead of its version
	// (node_takeover.go), so a cut-off primary can outrank its successor.
	PlantReceiverChangeRaisesEpoch Planted = 1 << 5
)

// plantedNames maps each planted bug to the name tests and the soak use.
var plantedNames = map[Planted]string{
	PlantNoCatchUpMerge:            "no-catch-up-merge",
	PlantNoRouteSeek:               "no-route-seek",
	PlantReplayKeepsHold:           "replay-keeps-hold",
	PlantOldRepairBlocksNewGap:     "old-repair-blocks-new-gap",
	PlantReceiverChangeRaisesEpoch: "receiver-change-raises-epoch",
}

// PlantedNames lists every planted bug's name, sorted.
func PlantedNames() []string {
	out := make([]string, 0, len(plantedNames))
	for _, n := range plantedNames {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ParsePlanted turns comma-separated bug names into a set.
func ParsePlanted(s string) (Planted, error) {
	var p Planted
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		found := false
		for b, n := range plantedNames {
			if n == name {
				p |= b
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("planted bug %q: unknown (known: %s)", name, strings.Join(PlantedNames(), ", "))
		}
	}
	return p, nil
}

// String is the set's names, comma-separated.
func (p Planted) String() string {
	var names []string
	for b, n := range plantedNames {
		if p&b != 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// Has reports whether bug b is planted.
func (p Planted) Has(b Planted) bool { return p&b != 0 }

// Planted is the set of bugs planted in this node (NodeConfig.Planted);
// strategies read it to undo their own fixes.
func (n *Node) Planted() Planted { return n.planted }
