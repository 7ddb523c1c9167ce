package ha

import (
	"slices"
	"time"
)

// A takeover's probe asks the primaries on both sides of the fragment
// whether they are connected on their far side (node_elect.go,
// farSideCut). An answerer's detector declares its far side dead only a
// detection after a cut, each observer within one heartbeat of the
// others: a backup cut off in an island with both neighbours' primaries,
// first to declare its own primary dead, was answered "connected" by both
// before they declared the sources and the sink dead, took over inside
// the island, and after the heal fenced the primary that had served
// outside and asked for input trimmed meanwhile (a gap under passive and
// active standby). So the upstream primary vouches for its own input
// before it answers: when it has not heard its upstream primaries (or
// sources) within vouchFresh, it asks them and answers once one of them
// answers — or, cut off, once the detector declared them all dead. An
// upstream that never answers leaves the probe unanswered, and the
// prober's view decides after ElectionSettle (a majority view, rule 6).
// After a real crash the input is flowing and the answer comes at once;
// behind an idle upstream it comes one round trip later.

// vouchFresh is how recently a primary must have heard its far side to
// answer a probe at once: a detection takes longer than that after a cut,
// so a far side heard this recently was not cut off when the prober lost
// its primary.
const vouchFresh = ElectionSettle / 2

// farHeard is when a primary last heard each input port's upstream
// primary (or source).
type farHeard struct {
	up [2]time.Duration
}

// noteFarHeard notes a message from m's sender when it is one of this
// primary's upstream primaries (or sources).
func (n *Node) noteFarHeard(m *Message) {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() {
		return
	}
	now := n.env.Now()
	for p := range n.Inputs() {
		if m.From == n.Upstream(p) {
			n.far.up[p] = now
		}
	}
}

// farFresh reports whether this primary heard its far side as seen from
// host (see farSide), one of its upstreams, within vouchFresh.
func (n *Node) farFresh(host string) bool {
	f, ok := n.topo.FragOf(host)
	if !ok {
		return false
	}
	now := n.env.Now()
	switch f {
	case n.DownstreamFrag():
		for p := range n.Inputs() {
			if at := n.far.up[p]; at > 0 && now-at < vouchFresh {
				return true
			}
		}
	}
	return false
}

// RouteProbeLevel is the Level of a route query that a host elected to
// take over sends as its probe: the answerer vouches for its far side.
const RouteProbeLevel uint8 = 2

// vouchTimer ends a vouch whose far side never answered.
const vouchTimer = "ha.vouch"

// vouching is a primary's pending answers to probes.
type vouching struct {
	askers []vouchAsk // probes waiting for the far side
	need   []string   // far-side hosts asked, none answered yet
	since  time.Duration
}

// vouchAsk is a waiting probe: who asked, and the fragment whose route
// the answer carries.
type vouchAsk struct {
	host string
	frag int
}

// answerProbe answers a probe from the sender of m with fragment frag's
// route: at once when this node is not a primary with a far side to vouch
// for, is cut off from it (farSideCut marks the answer) or heard it within
// vouchFresh; else after a round trip to its far side.
func (n *Node) answerProbe(m *Message, frag int) {
	far := n.farSide(m.From)
	if len(far) == 0 || n.farSideCut(m.From) || n.farFresh(m.From) || n.planted.Has(PlantUnvouchedProbe) {
		n.sendRouteView(m.From, frag)
		return
	}
	v := &n.vouch
	if !slices.ContainsFunc(v.askers, func(a vouchAsk) bool { return a.host == m.From }) {
		v.askers = append(v.askers, vouchAsk{m.From, frag})
	}
	if len(v.need) == 0 {
		v.since = n.env.Now()
		n.env.SetTimer(ElectionSettle, vouchTimer)
	}
	for _, h := range far {
		if !slices.Contains(v.need, h) {
			v.need = append(v.need, h)
			n.Send(h, &Message{Kind: KindRoute, Type: RouteQueryType})
		}
	}
}

// farSide is the live far side of this primary as seen from host: its
// upstream primaries (or sources) when host is of the downstream fragment;
// nil otherwise. Only the data path into the asker's fragment is vouched
// for: a successor that took over inside an island without the sources
// serves nothing and fences the primary that served outside, while one
// cut off only from the sink keeps the input it serves from.
func (n *Node) farSide(host string) []string {
	if n.frag < 0 || n.IsSink() || !n.IsPrimary() {
		return nil
	}
	f, ok := n.topo.FragOf(host)
	if !ok {
		return nil
	}
	var far []string
	switch f {
	case n.DownstreamFrag():
		for p := range n.Inputs() {
			if up := n.Upstream(p); up != "" && !n.down[up] && up != n.host {
				far = append(far, up)
			}
		}
	}
	return far
}

// vouchHeard notes a route message from host: an answer from the far side
// lets every waiting probe be answered.
func (n *Node) vouchHeard(host string) {
	if slices.Contains(n.vouch.need, host) {
		n.answerVouched()
	}
}

// vouchDown notes that the detector declared host dead: once no far-side
// host asked is left alive, the waiting probes are answered, and the
// answers say this node is cut off on its far side.
func (n *Node) vouchDown(host string) {
	v := &n.vouch
	if i := slices.Index(v.need, host); i >= 0 {
		v.need = slices.Delete(v.need, i, i+1)
		if len(v.need) == 0 {
			n.answerVouched()
		}
	}
}

// answerVouched answers every waiting probe with this node's view now.
func (n *Node) answerVouched() {
	v := &n.vouch
	askers := v.askers
	v.askers, v.need = nil, nil
	for _, a := range askers {
		n.sendRouteView(a.host, a.frag)
	}
}

// vouchExpired drops the waiting probes whose far side never answered
// within ElectionSettle: their probers' views decide.
func (n *Node) vouchExpired() {
	if v := &n.vouch; len(v.need) > 0 && n.env.Now()-v.since >= ElectionSettle {
		v.askers, v.need = nil, nil
	}
}
