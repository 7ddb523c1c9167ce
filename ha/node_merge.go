package ha

// ---- catch-up merge ----
//
// A fragment with two inputs (a union or a join fed by two sources) that
// takes over asks both upstreams to replay. Each replays its queue as fast
// as it can, in messages of up to 512 tuples, so the two replays arrive
// interleaved in chunks that each span hundreds of milliseconds of event
// time. An event-time window behind the union would see one input run far
// ahead of the other and drop the other's tuples as late: input lost by an
// artefact of the replay, not by the query. While such a fragment catches
// up, the node therefore delivers the accepted tuples of its two ports in
// event-time order (a merge of the two seq-ordered streams): it holds the
// tuples of one port while the other port, still catching up, has none
// buffered and may yet deliver older ones. A port that has caught up, or
// whose source ended, never holds the other back: what it accepts from then
// on is live, newer than anything replayed. Once both ports have caught up
// the node delivers what is held, in the same order, and returns to arrival
// order. The merge picks one valid interleaving among many; the output of a
// union after a recovery still differs from the failure-free run's.

// merging reports whether accepted tuples go through the catch-up merge:
// a two-input fragment that is catching up, or still holds merged tuples.
func (n *Node) merging() bool {
	if n.Inputs() != 2 || n.planted.Has(PlantNoCatchUpMerge) {
		return false
	}
	return n.catching != 0 || len(n.merge[0]) > 0 || len(n.merge[1]) > 0
}

// mergeWaits reports whether port p, holding nothing, may still deliver a
// tuple older than what the other port holds: it is catching up and its
// source has not ended.
func (n *Node) mergeWaits(p int) bool {
	return n.catching&(1<<p) != 0 && !n.ended[p]
}

// drainMerge delivers held tuples in event-time order (port 0 first on a
// tie) until a port that may still deliver older tuples holds none.
func (n *Node) drainMerge() {
	for {
		p := -1
		for q := range n.merge {
			if len(n.merge[q]) == 0 {
				if n.mergeWaits(q) && (len(n.merge[0]) > 0 || len(n.merge[1]) > 0) {
					return
				}
				continue
			}
			if p < 0 || n.merge[q][0].Time < n.merge[p][0].Time {
				p = q
			}
		}
		if p < 0 {
			return
		}
		t := n.merge[p][0]
		n.merge[p] = n.merge[p][1:]
		if len(n.merge[p]) == 0 {
			n.merge[p] = nil
		}
		n.deliver(t)
	}
}
