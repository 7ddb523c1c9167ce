package ha

import "time"

// A primary on the minority side of a partition that took all of its
// fragment's secondaries to the other side (say {A, B, C, src} against
// {A.1, B.1, C.1, …, sink}) sees its downstream alive, so it is not cut
// off (CutOff); once its view settles it drops the secondaries it sees
// dead and goes on acknowledging its upstream alone. Meanwhile a
// secondary on the majority side takes over (a takeover needs a majority
// view, viewMayElect) from the position it had at the cut, and after the
// heal asks the upstream to replay from there: the upstream trimmed that
// input on the minority primary's acknowledgements, and the windows it
// held are lost. So a primary that sees a minority of the deployment
// alive sends its upstream no acknowledgement (docs/reliability.md,
// rule 5) and keeps its secondaries in its route, and, once it sees a
// majority again, its view settles for ElectionSettle more (ViewSettled):
// the successor's route, pushed to the upstream when it sees it alive
// again, must reach it before an acknowledgement of the superseded
// primary does, and secondaries still seen dead are likely alive. Only
// the upstream's retention grows meanwhile.

// minorityView remembers when this node's view last turned from a
// minority of the deployment to a majority (PeerUp).
type minorityView struct {
	regainedAt time.Duration
	regained   bool
}

// noteViewUp records, after host was seen alive again, whether the view
// just regained a majority; wasMajority is SeesMajority before.
func (n *Node) noteViewUp(wasMajority bool) {
	if !wasMajority && n.SeesMajority() {
		n.mv.regainedAt, n.mv.regained = n.env.Now(), true
	}
}

// minorityHold reports whether this node sees a minority of the
// deployment alive: a primary withholds its acknowledgements upstream
// then (withholdsAck) and keeps its route (activestandby).
func (n *Node) minorityHold() bool {
	return !n.planted.Has(PlantMinorityAcks) && !n.SeesMajority()
}

// regainLeft is how long the view still settles after it last regained a
// majority (ViewSettled): the hosts of the other side are seen alive one
// by one, and the successor's route is on its way.
func (n *Node) regainLeft() time.Duration {
	if !n.mv.regained || n.planted.Has(PlantMinorityAcks) {
		return 0
	}
	return max(0, ElectionSettle-(n.env.Now()-n.mv.regainedAt))
}
