package ha

import (
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

// routeDeadLevel marks the answer to a route query (Message.Level) whose
// sender declared the route's primary dead.
const routeDeadLevel = 1

// recheck is a node's takeover re-check state.
type recheck struct {
	downAt    map[string]time.Duration // when each host was last declared dead
	since     time.Duration            // when this node learned its fragment's current primary
	asking    bool                     // a re-check is under way
	askedAt   time.Duration            // when the neighbours were last asked
	answered  bool                     // a neighbour answered since, naming the primary alive
	confirmed bool                     // a neighbour declared the primary dead too
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
	if n.planted.Has(PlantTakeoverStorm) {
		return false
	}
	at, ok := n.rc.downAt[n.routes[n.frag].Primary]
	return ok && at < n.rc.since
}

// recheckDue reports whether a takeover on a stale declaration may go
// ahead now; otherwise it asks the neighbours (again) and arms the
// election timer for their answers.
func (n *Node) recheckDue() bool {
	if n.rc.confirmed {
		return true
	}
	now := n.env.Now()
	if n.rc.asking && now-n.rc.askedAt < ElectionSettle {
		return false
	}
	if n.rc.asking && !n.rc.answered {
		return true // nobody answered: the detector's view decides
	}
	if !n.rc.asking {
		n.Trace(Event{Kind: EvNote, Peer: n.routes[n.frag].Primary, Epoch: n.Epoch(),
			Note: "primary declared dead before its route arrived: asking the neighbours before taking over"})
	}
	n.rc.asking, n.rc.answered, n.rc.askedAt = true, false, now
	var ask []string
	for p := range n.Inputs() {
		ask = append(ask, n.Upstream(p))
	}
	ask = append(ask, n.routes[n.DownstreamFrag()].Primary)
	for i, h := range ask {
		if h != "" && !n.down[h] && !slices.Contains(ask[:i], h) {
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
// route during a re-check.
func (n *Node) recheckAnswer(m *Message) {
	if !n.rc.asking || m.Route.Frag != n.frag {
		return
	}
	if r := n.routes[n.frag]; m.Route.Primary != r.Primary || m.Route.Epoch != r.Epoch {
		return
	}
	if m.Level == routeDeadLevel {
		n.rc.confirmed = true
	} else {
		n.rc.answered = true
	}
}

// sendRouteView answers a route query with this node's view of fragment
// frag's route, marked when this node declared its primary dead.
func (n *Node) sendRouteView(host string, frag int) {
	r := n.routes[frag]
	m := &Message{Kind: KindRoute, Route: &r}
	if n.down[r.Primary] {
		m.Level = routeDeadLevel
	}
	n.Send(host, m)
}
