package ha

import (
	"fmt"
	"slices"
	"time"
)

// The election takes the first host in takeover order not declared dead
// (rule 1 of docs/reliability.md), but each host computes that order from
// its own view: under passive standby the failed primary's backup comes
// first, and the announcement naming a new backup can be lost to some
// hosts (a partition, loss) while its checkpoint never reached the new
// backup either. Then the hosts that heard the announcement wait for the
// new backup, and the new backup, which believes the old one is backup,
// waits for it: every candidate is alive, none takes over, and the
// fragment has no primary for good, although each of them could serve.
//
// The rule: a host that waits for a live candidate before it in its
// takeover order asks that candidate for its view of the fragment's route
// when no new route arrived candidateWait after the wait began, and again
// every ElectionSettle while no answer comes. A candidate that took over
// answers with its route, which the host adopts like any other (its
// announcement was lost); one whose answer still names the dead primary
// at the same epoch has not taken over, and the host passes it over: the
// election goes on with the next host in order. Silence passes nobody
// over (loss may have taken the announcement and the answers alike, and a
// takeover made meanwhile must not be fenced by a second one). The bound
// is long enough for any candidate that does act — its probe, re-check,
// question to its primary and empty-restart settle take a few
// ElectionSettle — so it changes nothing while the candidates agree. The
// wait starts again when the fragment's route changes or its primary is
// seen alive.

// candidateWait is how long a host waits for a live candidate before it
// in takeover order to take over before it passes it over.
const candidateWait = 10 * ElectionSettle

// candWait is a node's wait for live candidates before it in takeover
// order to take its fragment over from a dead primary.
type candWait struct {
	prim    string        // the primary declared dead
	epoch   uint64        // at this epoch of the fragment's route
	cand    string        // the candidate waited for
	since   time.Duration // since when
	askedAt time.Duration // when the candidate was last asked (0: not yet)
	idle    bool          // it answered that it did not take over
	passed  []string      // candidates passed over: they never acted
}

// skips reports whether the election passes host h over.
func (c *candWait) skips(h string) bool { return slices.Contains(c.passed, h) }

// passIdleCandidates passes over the live candidates before this node in
// order that did not take over within candidateWait (see above), and arms
// the election timer for the one it now waits for.
func (n *Node) passIdleCandidates(order []string) {
	if n.planted.Has(PlantLiveCandidateWaited) {
		return
	}
	r := n.routes[n.frag]
	if n.cw.prim != r.Primary || n.cw.epoch != r.Epoch {
		n.cw = candWait{prim: r.Primary, epoch: r.Epoch}
	}
	now := n.env.Now()
	for {
		e := n.electedIn(order)
		if e == "" || e == n.host || !n.Connected() {
			n.cw.cand = ""
			return
		}
		if e != n.cw.cand {
			n.cw.cand, n.cw.since, n.cw.askedAt, n.cw.idle = e, now, 0, false
			n.env.SetTimer(candidateWait, electTimer)
			return
		}
		if now-n.cw.since < candidateWait {
			return
		}
		if !n.cw.idle {
			if n.cw.askedAt == 0 || now-n.cw.askedAt >= ElectionSettle {
				if n.cw.askedAt == 0 {
					n.Trace(Event{Kind: EvNote, Peer: e, Epoch: r.Epoch,
						Note: fmt.Sprintf("%s, before this host in takeover order, has not taken %s's place in %v: asking it", e, r.Primary, candidateWait)})
				}
				n.cw.askedAt = now
				n.Send(e, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
				n.env.SetTimer(ElectionSettle, electTimer)
			}
			return
		}
		n.Trace(Event{Kind: EvNote, Peer: e, Epoch: r.Epoch,
			Note: fmt.Sprintf("%s did not take %s's place: passing it over", e, r.Primary)})
		n.cw.passed = append(n.cw.passed, e)
	}
}

// candidateAnswer takes the answer of the candidate this node asked
// (passIdleCandidates): a view of the fragment's route that still names
// the dead primary at the same epoch says it did not take over.
func (n *Node) candidateAnswer(m *Message) {
	if n.cw.askedAt == 0 || m.From != n.cw.cand || m.Type != RouteViewType || m.Route.Frag != n.frag {
		return
	}
	if m.Route.Primary == n.cw.prim && m.Route.Epoch == n.cw.epoch {
		n.cw.idle = true
	}
}
