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

	// Bugs of earlier rounds the soak's self-test finds (bits 1–15).
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
	// PlantNoMissedRouteQuery never asks a sender of a newer epoch for the
	// route this node missed (askRoute).
	PlantNoMissedRouteQuery Planted = 1 << 50
	// PlantNoRouteQueryOnPeerUp: a host seeing its fragment's primary alive
	// again does not ask it for the route (PeerUp).
	PlantNoRouteQueryOnPeerUp Planted = 1 << 51
	// PlantAnyRoleHoldsForResume lets a host that is not its fragment's
	// primary hold output for a new downstream primary's resume (onRoute).
	PlantAnyRoleHoldsForResume Planted = 1 << 53
	// PlantSkippedNotResent does not replay the output skipped while a
	// downstream host was declared dead when it is seen alive (resendSkipped).
	PlantSkippedNotResent Planted = 1 << 55

	// PlantSilentFence undoes route convergence after heals
	// (node_converge.go): a fenced host or one dropped from a route stays
	// silent to whoever still sends to it or asks it, a fenced primary
	// tells nobody who fenced it, a primary pushes no route to a host
	// seen alive again, a relayed route older than the receiver's is not
	// corrected, and one answer from either side ends a takeover's probe.
	PlantSilentFence Planted = 1 << 16
	// PlantNoUpstreamResume undoes the resume a receiver sends the new
	// primary of its upstream fragment when it learns of it late: the new
	// primary keeps holding live output for a resume that never comes.
	PlantNoUpstreamResume Planted = 1 << 17
	// PlantTrimWhileCutOff undoes the withheld acknowledgements of a
	// primary cut off from its downstream or with a settling view
	// (node_cutoff.go): its upstream trims what a successor across the
	// partition needs.
	PlantTrimWhileCutOff Planted = 1 << 18
	// PlantTrustRoutes undoes the confirmation of routes that would fence
	// their receiver or jump epochs (node_confirm.go): one forged route
	// fences a healthy primary.
	PlantTrustRoutes Planted = 1 << 19
	// PlantMinorityRestart undoes the majority a host needs to see before
	// it restarts a fragment empty (node_cutoff.go): a host in a minority
	// island throws away the state its fragment's primary still serves.
	PlantMinorityRestart Planted = 1 << 20
)

// plantedNames maps each planted bug to the name tests and the soak use.
var plantedNames = map[Planted]string{
	PlantNoCatchUpMerge:            "no-catch-up-merge",
	PlantNoRouteSeek:               "no-route-seek",
	PlantReplayKeepsHold:           "replay-keeps-hold",
	PlantOldRepairBlocksNewGap:     "old-repair-blocks-new-gap",
	PlantReceiverChangeRaisesEpoch: "receiver-change-raises-epoch",
	PlantNoMissedRouteQuery:        "no-missed-route-query",
	PlantNoRouteQueryOnPeerUp:      "no-route-query-on-peer-up",
	PlantAnyRoleHoldsForResume:     "any-role-holds-for-resume",
	PlantSkippedNotResent:          "skipped-not-resent",
	PlantSilentFence:               "silent-fence",
	PlantNoUpstreamResume:          "no-upstream-resume",
	PlantTrimWhileCutOff:           "trim-while-cut-off",
	PlantTrustRoutes:               "trust-routes",
	PlantMinorityRestart:           "minority-restart",
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
