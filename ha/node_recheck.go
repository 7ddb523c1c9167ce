package ha

import (
	"fmt"
	"slices"
	"time"
)

// Takeover re-check. A host's failure detector declares a host dead at one
// moment and says nothing more until it sees that host alive again. When
// replicas of a fragment are cut off from each other but not from the rest
// (a partition between them), each declares the others dead; the one that
// took over fences the others through a route relayed by the neighbours or
// sent directly at the heal; a fenced one, still believing the new primary
// dead, took over again, fenced it in turn, and so on until the detector
// saw them alive: a takeover storm (up to 65 takeovers in one run, each
// restarting the fragment's state).
//
// The rule: a host takes over at once only from a primary it declared dead
// after it learned that host was the primary. A declaration older than the
// route (the primary took over while this host already believed it dead)
// says nothing about the new primary, so the host re-checks: it asks the
// primaries of the neighbouring fragments — the hosts the new primary
// exchanges data with — for their view of its fragment's route, and takes
// over only when one of them answers that it too declared that primary
// dead, or when none answers within ElectionSettle (the detector's view
// decides, as for a probe). While they see the primary alive it asks again
// every ElectionSettle and stays fenced; a partition that cut off only the
// replicas from each other thus costs one takeover, however long it lasts.
// Neighbours answer with the fragment's hosts they declared dead
// (sendRouteView).

// A host elected only because it believes the candidates before it in
// takeover order dead (three replicas cut off from each other: B.2 believes
// B.1 dead too) re-checks the same way before it takes over: while a
// neighbour sees a skipped candidate alive, that candidate takes over and
// this host learns its route. That wait is bounded by maxSkipWait, so that
// a candidate that never acts (a view of the takeover order that differs)
// cannot keep the fragment without a primary.

// maxSkipWait bounds how long an elected host waits while the neighbours
// see a candidate before it in takeover order alive.
const maxSkipWait = RouteSeekDelay

// recheck is a node's takeover re-check state.
type recheck struct {
	downAt    map[string]time.Duration // when each host was last declared dead
	since     time.Duration            // when this node learned its fragment's current primary
	need      []string                 // the hosts whose death the neighbours must confirm
	asking    bool                     // a re-check is under way
	startedAt time.Duration            // when it began
	askedAt   time.Duration            // when the neighbours were last asked
	answered  bool                     // a neighbour answered since, seeing one of need alive
	confirmed bool                     // a neighbour declared every host of need dead
}

// noteDown records when host was declared dead.
func (n *Node) noteDown(host string) {
	if n.rc.downAt == nil {
		n.rc.downAt = map[string]time.Duration{}
	}
	n.rc.downAt[host] = n.env.Now()
}

// notePrimary records that this node learned a new primary of its own
// fragment now.
func (n *Node) notePrimary() { n.rc.since = n.env.Now() }

// staleDeath reports whether the node declared its fragment's primary dead
// before it learned that host was the primary.
func (n *Node) staleDeath() bool {
	at, ok := n.rc.downAt[n.routes[n.frag].Primary]
	return ok && at < n.rc.since
}

// recheckNeed lists the hosts whose death the neighbours must confirm
// before this node, elected in takeover order, takes over: the primary when
// its declaration is stale, and the candidates before this node that it
// skipped as dead. bounded says the wait ends after maxSkipWait (only
// skipped candidates to confirm).
func (n *Node) recheckNeed(order []string) (need []string, bounded bool) {
	if n.planted.Has(PlantTakeoverStorm) {
		return nil, false
	}
	prim := n.routes[n.frag].Primary
	for _, h := range order {
		if h == n.host {
			break
		}
		if h != prim && n.down[h] && !slices.Contains(need, h) {
			need = append(need, h)
		}
	}
	if n.staleDeath() {
		return append(need, prim), false
	}
	return need, len(need) > 0
}

// recheckDue reports whether a takeover may go ahead now; otherwise it
// asks the neighbours (again) for their view and arms the election timer
// for their answers.
func (n *Node) recheckDue(need []string, bounded bool) bool {
	n.rc.need = need
	if n.rc.confirmed {
		return true
	}
	now := n.env.Now()
	if n.rc.asking {
		switch {
		case now-n.rc.askedAt < ElectionSettle:
			return false
		case !n.rc.answered:
			return true // nobody answered: the detector's view decides
		case bounded && now-n.rc.startedAt >= maxSkipWait:
			n.Trace(Event{Kind: EvNote, Note: fmt.Sprintf("%s still seen alive, but took no takeover: taking over", need)})
			return true
		}
	} else {
		n.rc.startedAt = now
		n.Trace(Event{Kind: EvNote, Peer: n.routes[n.frag].Primary, Epoch: n.Epoch(),
			Note: fmt.Sprintf("asking the neighbours whether %s failed before taking over", need)})
	}
	n.rc.asking, n.rc.answered, n.rc.askedAt = true, false, now
	var ask []string
	for p := range n.Inputs() {
		ask = append(ask, n.Upstream(p))
	}
	ask = append(ask, n.routes[n.DownstreamFrag()].Primary)
	n.probeSides, n.heardSides = 0, 0
	for i, h := range ask {
		if h != "" && !n.down[h] && !slices.Contains(ask[:i], h) {
			if i == len(ask)-1 {
				n.probeSides |= 2
			} else {
				n.probeSides |= 1
			}
			n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
		}
	}
	n.env.SetTimer(ElectionSettle, electTimer)
	return false
}

// recheckOff ends a re-check: the election no longer elects this node
// against a primary it believes dead.
func (n *Node) recheckOff() { n.rc.asking, n.rc.answered, n.rc.confirmed = false, false, false }

// recheckAnswer takes a neighbour's answer about this node's fragment's
// route during a re-check: its Seq marks the fragment's hosts the
// neighbour declared dead (sendRouteView).
func (n *Node) recheckAnswer(m *Message) {
	if !n.rc.asking || m.Route.Frag != n.frag {
		return
	}
	if r := n.routes[n.frag]; m.Route.Primary != r.Primary || m.Route.Epoch != r.Epoch {
		return
	}
	hosts := n.topo.Frags[n.frag].Hosts
	for _, h := range n.rc.need {
		if i := slices.Index(hosts, h); i < 0 || i >= 64 || m.Seq&(1<<i) == 0 {
			n.rc.answered = true
			return
		}
	}
	n.rc.confirmed = true
}

// RouteViewType is the Type of a KindRoute message that answers a route
// query: the route it carries is the answerer's view, not an announcement
// (no resume follows it).
const RouteViewType = "view"

// sendRouteView answers a route query with this node's view of fragment
// frag's route; its Seq marks (bit i: the fragment's i-th host, the first
// 64) the hosts this node declared dead, and its Level is RouteFarCut when
// this node is cut off on its far side from host (farSideCut).
func (n *Node) sendRouteView(host string, frag int) {
	r := n.routes[frag]
	var dead uint64
	for i, h := range n.topo.Frags[frag].Hosts {
		if i < 64 && n.down[h] {
			dead |= 1 << i
		}
	}
	var level uint8
	if n.farSideCut(host) {
		level = RouteFarCut
	}
	n.Send(host, &Message{Kind: KindRoute, Type: RouteViewType, Route: &r, Seq: dead, Level: level})
}
