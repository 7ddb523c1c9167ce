package ha

import (
	"fmt"
	"slices"
	"time"
)

// Epoch bounds. A route may raise a fragment's epoch by at most
// maxEpochStep over what its receiver knows (a host misses a few route
// changes at most, never thousands), and no epoch reaches maxEpoch, so
// that epochs never wrap however a damaged or forged route is numbered.
const (
	maxEpochStep = 1 << 10
	maxEpoch     = 1 << 62
)

// supersedes reports whether route r replaces old, the route its receiver
// knows for the same fragment: a higher epoch; in the same epoch, a later
// version of the same primary's route (new receivers); or the same epoch
// taken by a host later in the fragment's takeover order. Two hosts that
// took over from one view at once (each believing the other dead) thus
// end with one primary everywhere: the later one, which fences the other.
func (r Route) supersedes(old Route, topo *Topology) bool {
	if r.Epoch != old.Epoch {
		return r.Epoch > old.Epoch
	}
	if r.Primary == old.Primary {
		return r.Version > old.Version
	}
	if r.Frag < 0 || r.Frag >= len(topo.Frags) {
		return false
	}
	hosts := topo.Frags[r.Frag].Hosts
	return slices.Index(hosts, r.Primary) > slices.Index(hosts, old.Primary)
}

// validRoute reports whether a route received from host from may be
// believed: it names a protected fragment, its primary and receivers are
// hosts of that fragment, the sender is a host of that fragment (or relays
// the route to one), and its epoch lies within maxEpochStep of what this
// node knows.
func (n *Node) validRoute(r Route, from string) bool {
	why := ""
	switch {
	case from == n.host && !n.planted.Has(PlantTrustRoutes):
		why = "it claims to come from this host"
	case r.Frag < 0 || r.Frag >= len(n.topo.Frags):
		why = fmt.Sprintf("no fragment %d", r.Frag)
	case !slices.Contains(n.topo.Frags[r.Frag].Hosts, r.Primary):
		why = fmt.Sprintf("primary %q is no host of fragment %s", r.Primary, n.topo.Frags[r.Frag].Name)
	case slices.ContainsFunc(r.Receivers, func(h string) bool { return !slices.Contains(n.topo.Frags[r.Frag].Hosts, h) }):
		why = fmt.Sprintf("a receiver is no host of fragment %s", n.topo.Frags[r.Frag].Name)
	case r.Epoch >= maxEpoch || r.Epoch > n.routes[r.Frag].Epoch+maxEpochStep:
		why = fmt.Sprintf("epoch %d jumps too far past %d", r.Epoch, n.routes[r.Frag].Epoch)
	case r.Version >= maxEpoch:
		why = fmt.Sprintf("version %d out of range", r.Version)
	case !slices.Contains(n.topo.Frags[r.Frag].Hosts, from) && n.frag != r.Frag:
		// Only a host of the fragment announces its route; another host
		// relays one only to a host of that fragment (tellRoute, a route
		// query's answer).
		why = fmt.Sprintf("sender %q is no host of fragment %s", from, n.topo.Frags[r.Frag].Name)
	default:
		if _, ok := n.topo.FragOf(from); ok {
			return true
		}
		why = fmt.Sprintf("sender %q is no host of the topology", from)
	}
	n.Trace(Event{Kind: EvNote, Peer: from, Frag: r.Frag, Epoch: r.Epoch, Note: "route ignored: " + why})
	return false
}

// toldKey and toldRoute remember which route tellRoute last sent a host
// for a fragment, and when.
type toldKey struct {
	host string
	frag int
}

type toldRoute struct {
	epoch, version uint64
	primary        string
	at             time.Duration
}

// retellAfter is how long tellRoute waits before it tells a host the same
// route again: the first telling may have been lost.
const retellAfter = ResumeRetry

// tellRoute sends this node's route for fragment frag to host: at once
// when this node never told host that route, again only retellAfter after
// the last time (a host that keeps sending to a superseded route lost the
// first telling, and a busy data path must not turn into a flood).
func (n *Node) tellRoute(host string, frag int) {
	if host == "" || host == n.host {
		return
	}
	r := n.routes[frag]
	if n.toldStale == nil {
		n.toldStale = map[toldKey]toldRoute{}
	}
	k := toldKey{host, frag}
	now := n.env.Now()
	if t, ok := n.toldStale[k]; ok && t.epoch == r.Epoch && t.version == r.Version && t.primary == r.Primary &&
		(now-t.at < retellAfter || n.planted.Has(PlantSilentFence)) {
		return
	}
	n.toldStale[k] = toldRoute{epoch: r.Epoch, version: r.Version, primary: r.Primary, at: now}
	n.sendRoute(host, frag)
}

// RouteToldType is the Type of a KindRoute message that passes a route on
// to one host (an answer, a correction, a relay), as opposed to a
// primary's announcement to every host when its route changes: a route
// told may be one its receiver missed long ago.
const RouteToldType = "told"

// sendRoute sends host this node's view of fragment frag's route.
func (n *Node) sendRoute(host string, frag int) {
	r := n.routes[frag]
	n.Send(host, &Message{Kind: KindRoute, Type: RouteToldType, Route: &r})
}

// answerRouteQuery answers a host that asked for a route (RouteQueryType):
// for a query naming a fragment (Seq f+1), this node's view of fragment
// f's route; otherwise a fragment's primary sends its own route, any other
// host its view of the asker's fragment.
func (n *Node) answerRouteQuery(m *Message) {
	f := m.Frag
	switch {
	case m.Seq > 0:
		if m.Seq > uint64(len(n.topo.Frags)) {
			return
		}
		f = int(m.Seq - 1)
	case n.frag >= 0 && !n.IsSink() && n.IsPrimary():
		f = n.frag
	}
	if f < 0 || f >= len(n.topo.Frags) {
		return
	}
	if m.Seq == 0 && m.Level == RouteProbeLevel {
		n.answerProbe(m, f) // node_vouch.go
		return
	}
	n.sendRouteView(m.From, f)
}

// staleData reacts to data dropped as stale. Data from a newer epoch than
// this node knows means it missed a route: it asks the sender, once per
// epoch. Data from an older epoch, or from a host that is not the primary
// at this epoch, comes from a host that missed the route that superseded
// it: it is told.
func (n *Node) staleData(m *Message) {
	if m.Frag < 0 || m.Frag >= len(n.topo.Frags) {
		return
	}
	if m.Epoch > n.routes[m.Frag].Epoch {
		n.askRoute(m)
		return
	}
	n.tellRoute(m.From, m.Frag)
}

// askRoute asks the sender of m, which carries an epoch of its fragment
// newer than this node knows, for its route: this node missed the route of
// a takeover. It asks once per epoch, and again when data of that epoch
// still arrives retellAfter later: loss may have taken the question or
// its answer, and the node would otherwise drop the new primary's output
// for good (a sink under 50 % loss did, to the end of the run).
func (n *Node) askRoute(m *Message) {
	if n.planted.Has(PlantNoMissedRouteQuery) {
		return
	}
	if n.routeAsked == nil {
		n.routeAsked = map[int]routeAsk{}
	}
	now := n.env.Now()
	a, ok := n.routeAsked[m.Frag]
	again := a.epoch == m.Epoch && now-a.at >= retellAfter && !n.planted.Has(PlantRouteAskedOnce)
	if !ok || a.epoch < m.Epoch || again {
		n.routeAsked[m.Frag] = routeAsk{epoch: m.Epoch, at: now}
		n.Send(m.From, &Message{Kind: KindRoute, Type: RouteQueryType})
	}
}

// routeAsk is the newest epoch of a fragment a node asked a route for,
// and when.
type routeAsk struct {
	epoch uint64
	at    time.Duration
}

// A node learns a neighbour fragment's new route from its new primary's
// announcement. When that one message is lost (loss, a partition, a
// broken connection), the node would keep sending to — or asking — a
// primary it knows is dead, for ever: a fragment that recovered stays cut
// off from its neighbour. So a node whose neighbour fragment's primary is
// declared dead, and which has not learned a newer route RouteSeekDelay
// later, asks that fragment's live hosts for their view of its route,
// again at doubling intervals (at most maxRouteSeek) until it knows a
// live primary. A recovery that announces itself in time costs nothing.

// seekTimer is the node's own timer that asks for missed routes.
const seekTimer = "ha.seek"

// RouteSeekDelay is how long after a neighbour's primary was declared
// dead a node first asks for the neighbour's new route: detection at the
// other hosts and the election's probe normally take less.
const (
	RouteSeekDelay = 3 * ElectionSettle
	maxRouteSeek   = 16 * ResumeRetry
)

// neighbours lists the protected fragments next to this node's: the one
// it receives from and the one it sends to.
func (n *Node) neighbours() []int {
	var out []int
	for _, f := range []int{n.frag - 1, n.DownstreamFrag()} {
		if f >= 0 && f < len(n.topo.Frags) && f != n.frag {
			out = append(out, f)
		}
	}
	return out
}

// lostNeighbours lists the neighbour fragments whose primary, as this node
// knows it, is declared dead.
func (n *Node) lostNeighbours() []int {
	var out []int
	for _, f := range n.neighbours() {
		if n.down[n.routes[f].Primary] {
			out = append(out, f)
		}
	}
	return out
}

// watchRoutes arms the seek timer when a neighbour fragment lost its
// primary.
func (n *Node) watchRoutes() {
	if n.seekArmed || n.noRepair || n.planted.Has(PlantNoRouteSeek) || len(n.lostNeighbours()) == 0 {
		return
	}
	n.seekArmed, n.seekBackoff = true, RouteSeekDelay
	n.env.SetTimer(n.seekBackoff, seekTimer)
}

// seekRoutes asks the live hosts of every neighbour fragment whose known
// primary is dead for their view of its route, and asks again later.
func (n *Node) seekRoutes() {
	n.seekArmed = false
	asked := false
	for _, f := range n.lostNeighbours() {
		for _, h := range n.topo.Frags[f].Hosts {
			if !n.down[h] {
				n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(f) + 1})
				asked = true
			}
		}
	}
	if !asked {
		return // armed again by the next PeerDown, or a host seen alive (PeerUp)
	}
	n.seekArmed = true
	n.seekBackoff = min(2*n.seekBackoff, maxRouteSeek)
	n.env.SetTimer(n.seekBackoff, seekTimer)
}
