package ha

import (
	"slices"
)

// ---- driver entry points ----

// GenTimer is the timer a source node sets to emit what is due; runtimes
// that account for pending work (inproc) recognise it by this name.
const GenTimer = "ha.gen"

// Start runs when the run begins.
func (n *Node) Start() {
	if n.gen != nil {
		n.env.SetTimer(0, GenTimer)
	}
	n.hooks.Start()
	n.flush()
}

// Fire runs a timer.
func (n *Node) Fire(name string) {
	if name == GenTimer {
		n.generate()
	} else if name == resumeTimer {
		n.retryResumes()
	} else if name == tailTimer {
		n.sendTail()
	} else if name == endTimer {
		n.sendEndTails()
	} else if name == electTimer {
		n.elect()
	} else if name == seekTimer {
		n.seekRoutes()
	} else if name == vouchTimer {
		n.vouchExpired()
	} else if !n.fenced {
		n.hooks.Timer(name)
	}
	n.flush()
}

// PeerDown tells the node the failure detector declared host dead.
func (n *Node) PeerDown(host string) {
	if n.down[host] {
		return
	}
	n.down[host] = true
	n.downAt, n.downSeen = n.env.Now(), true
	n.noteDown(host)
	n.noteMinority()
	n.Trace(Event{Kind: EvDetect, Peer: host})
	n.noteSkipped(host)
	n.vouchDown(host)
	n.hooks.PeerDown(host)
	n.elect()
	n.watchRoutes()
	n.flush()
}

// PeerUp tells the node a host declared dead is alive again.
func (n *Node) PeerUp(host string) {
	if !n.down[host] {
		return
	}
	wasMajority, wasInputDown := n.SeesMajority(), n.IsPrimary() && n.inputDown()
	delete(n.down, host)
	n.noteViewUp(wasMajority)
	if wasInputDown && !n.inputDown() {
		n.inputBack, n.inputBackAt = true, n.env.Now() // node_cutoff.go
	}
	n.Trace(Event{Kind: EvAlive, Peer: host})
	if n.frag >= 0 && !n.IsSink() && host != n.host && host == n.routes[n.frag].Primary && !n.planted.Has(PlantNoRouteQueryOnPeerUp) {
		// This node may have missed its fragment's routes while it was
		// cut off from the primary: a secondary dropped meanwhile would
		// otherwise take over later from its stale state, believing
		// itself next in line. It asks (the primary also pushes its
		// route, peerBack; a superseded one is answered with the newer).
		n.Send(host, &Message{Kind: KindRoute, Type: RouteQueryType, Seq: uint64(n.frag) + 1})
	}
	n.resendSkipped(host)
	n.peerBack(host)
	n.endPeerUp(host)
	n.hooks.PeerUp(host)
	n.elect()
	n.watchRoutes()
	n.flush()
}

// Deliver handles one incoming message. Neither the node nor its hooks
// keep m or its Tuples after it returns: the Env may recycle them.
func (n *Node) Deliver(m *Message) {
	if (n.probing || n.rc.asking) && m.Frag != n.frag {
		// Word from every side asked, by a probe or a re-check, shows this
		// node is not cut off (heardSide).
		n.heardSide(m)
	}
	n.primaryAnswered(m)
	n.noteFarHeard(m)
	if m.Kind == KindRoute && len(n.vouch.need) > 0 {
		n.vouchHeard(m.From) // node_vouch.go
	}
	n.deathWordRefuted(m) // node_deathword.go
	if m.Kind == KindAck && m.Type == EndAckType {
		n.onEndAck(m) // the runtime's own: no strategy sees it
		return
	}
	if m.Kind == KindRoute && m.Route != nil {
		n.recheckAnswer(m)   // node_recheck.go
		n.deathWordAnswer(m) // node_deathword.go
		n.candidateAnswer(m) // node_candwait.go
	}
	if m.Kind == KindResume {
		// Whoever answers the resume (the runtime or a hook), the live
		// output held back meanwhile follows the answer.
		defer n.releaseAwaiting(m.From)
	}
	if m.Kind == KindStrategy && m.Frag == n.frag && n.frag >= 0 && m.Frag < len(n.topo.Frags) && m.Epoch > n.Epoch() {
		// A strategy message from a primary of a newer epoch of this
		// fragment: this node missed its takeover's route.
		n.askRoute(m)
	}
	if !n.hooks.Message(m) {
		switch m.Kind {
		case KindData:
			n.onData(m)
		case KindRoute:
			if m.Route != nil {
				n.onRoute(*m.Route, m.From, m.Type == RouteToldType, m.Type == "")
			} else if m.Type == RouteQueryType {
				n.answerRouteQuery(m)
			}
		case KindResume:
			n.onResume(m)
		}
	}
	if m.Kind != KindData {
		// A strategy's message can change the takeover order (a backup
		// announced), a route the primary.
		n.elect()
	}
	n.flush()
}

func (n *Node) generate() {
	next, more := n.gen.due(n.env.Now(), n.output)
	if more && next <= n.env.Now() {
		n.env.SetTimer(0, GenTimer) // a capped burst: continue right away
		return
	}
	if more {
		// Wake at the next tuple's intended time, but at most once per
		// batch period, measured from the intended (not the actual) wake
		// time so that handler costs never make the source drift.
		n.gen.wake = max(next, n.gen.wake+n.gen.spec.Batch)
		n.env.SetTimer(max(0, n.gen.wake-n.env.Now()), GenTimer)
	}
}

// onRoute learns route r from host from: told when passed on (a
// correction, a relay), announced when it is a primary's announcement of
// its own takeover or change (neither: an answer to a route query).
func (n *Node) onRoute(r Route, from string, told, announced bool) {
	if !n.validRoute(r, from) {
		return
	}
	old := n.routes[r.Frag]
	if !r.supersedes(old, n.topo) {
		// The sender knows a route older than ours: tell it (a primary
		// that missed a takeover learns it was superseded, a takeover
		// made on an old view is made again on the new one, a relay of a
		// superseded route is corrected).
		n.correctRoute(r, old, from)
		return
	}
	if !n.confirmed(r, old, from) {
		return
	}
	n.routes[r.Frag] = r
	if r.Frag == n.frag && r.Primary != old.Primary {
		n.notePrimary()
	}
	n.Trace(Event{Kind: EvRoute, Peer: r.Primary, Frag: r.Frag, Epoch: r.Epoch})
	if r.Frag == n.frag && r.Primary != n.host && !slices.Contains(r.Receivers, n.host) && old.Primary == n.host && !n.fenced {
		n.fenced = true
		n.Trace(Event{Kind: EvFenced, Peer: r.Primary, Epoch: r.Epoch, Note: "superseded by a newer epoch"})
		n.tellFenced()
	}
	if r.Frag == n.frag-1 && n.IsReceiver() {
		if r.ResetSeq && (r.Epoch != old.Epoch || r.Primary != old.Primary) {
			// The new upstream numbers from 1: a later first tuple is a gap.
			n.resetPort(0, n.fencing)
		}
		if r.Primary != old.Primary {
			n.newUpstream(r, told) // whoever now holds the data
		}
	}
	if r.Frag == n.DownstreamFrag() && !n.IsSink() {
		for h := range n.awaiting {
			if h != r.Primary {
				delete(n.awaiting, h) // superseded before it asked
			}
		}
		// Only a primary is asked to resume: a secondary or spare that
		// held output for it would keep holding it after its own takeover.
		// Only the takeover's announcement promises a resume: a route
		// learnt later (an answer, a correction, a push after a heal) may
		// be one whose resume went long ago to whoever served then.
		if r.Resume && r.Primary != old.Primary && (n.IsPrimary() || n.planted.Has(PlantAnyRoleHoldsForResume)) &&
			(announced || n.planted.Has(PlantHoldForToldRoute)) {
			n.holdFor(r.Primary)
		}
	}
	n.hooks.RouteChanged(old, r)
}

// onResume answers a resume request from the downstream fragment's primary
// (a takeover, or a gap repair) or from one of its receivers (a gap
// repair) with a replay of the retained output after the requested seq.
func (n *Node) onResume(m *Message) {
	if m.Frag != n.DownstreamFrag() || n.Stale(m) || !n.IsPrimary() {
		n.resumeRefused(m)
		return
	}
	if r := n.routes[m.Frag]; r.Primary != m.From && !slices.Contains(r.Receivers, m.From) {
		return
	}
	n.Replay(m.From, m.Seq)
}
