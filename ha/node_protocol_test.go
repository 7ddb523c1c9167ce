package ha_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// chainTopology is src → A → B (hosts B, B.1, B.2) → sink.
func chainTopology() *ha.Topology {
	noOps := func() ([]ha.Operator, error) { return nil, nil }
	return &ha.Topology{
		Sources: []string{"src"}, Sink: "sink",
		Frags: []ha.Fragment{
			{Name: "A", Hosts: []string{"A"}, Inputs: 1, NewOps: noOps},
			{Name: "B", Hosts: []string{"B", "B.1", "B.2"}, Inputs: 1, NewOps: noOps},
		},
	}
}

func newChainNode(t *testing.T, host string, env *fakeEnv) *ha.Node {
	t.Helper()
	n, err := ha.NewNode(ha.NodeConfig{Host: host, Topology: chainTopology(), Env: env, Strategy: strategies.Amnesia{}})
	require.NoError(t, err)
	n.Start()
	return n
}

func (e *fakeEnv) kinds(kind ha.EventKind) []ha.Event {
	var out []ha.Event
	for _, ev := range e.trace {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// TestElectionMovesPastAFailedCandidate: the next host in line waits for
// the one before it, and takes over once that one is declared dead too —
// in either order of detection.
func TestElectionMovesPastAFailedCandidate(t *testing.T) {
	for _, order := range [][]string{{"B", "B.1"}, {"B.1", "B"}} {
		env := &fakeEnv{}
		n := newChainNode(t, "B.2", env)
		n.PeerDown(order[0])
		assert.Empty(t, env.kinds(ha.EvTakeover), "%v: B.1 comes first while it is not declared dead", order)
		n.PeerDown(order[1])
		assert.Empty(t, env.kinds(ha.EvTakeover), "%v: first a probe of both sides", order)
		require.True(t, probed(env, "A"), "%v: the upstream is asked for its route and view", order)
		require.True(t, probed(env, "sink"), "%v: the downstream is asked for its route", order)
		// The upstream answers that it declared B and B.1 dead too (Seq
		// marks the fragment's hosts by index, node_recheck.go).
		r := n.Route(1)
		n.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A", Frag: 0, Seq: 0b011, Route: &r})
		assert.Empty(t, env.kinds(ha.EvTakeover), "%v: one side answered: the other may be cut off", order)
		answerFromSink(n)
		require.Len(t, env.kinds(ha.EvTakeover), 1, "%v: the answers show B.2 is not cut off and B.1 failed", order)
		assert.True(t, n.IsPrimary())
		assert.Equal(t, uint64(1), n.Epoch())
	}
}

// answerFromSink delivers the sink's answer to a probe of fragment B.
func answerFromSink(n *ha.Node) {
	n.Deliver(&ha.Message{Kind: ha.KindRoute, Type: ha.RouteToldType, From: "sink", Frag: 2,
		Route: &ha.Route{Frag: 1, Primary: "B", Receivers: []string{"B"}}})
}

// probed reports whether the node asked host for its route.
func probed(env *fakeEnv, host string) bool {
	for _, s := range env.sent {
		if s.to == host && s.m.Kind == ha.KindRoute && s.m.Type == ha.RouteQueryType {
			return true
		}
	}
	return false
}

// TestACutOffHostDoesNotTakeOver: a host that declared its primary dead
// but gets no answer to its probe and then declares both sides of its
// fragment dead too (a partition cut it off) does not take over; once it
// sees the other hosts again it has nothing to do.
func TestACutOffHostDoesNotTakeOver(t *testing.T) {
	env := &fakeEnv{}
	n := newChainNode(t, "B.1", env)
	n.PeerDown("B")
	require.True(t, probed(env, "A"))
	for _, h := range []string{"A", "B.2", "sink", "src"} {
		n.PeerDown(h)
	}
	env.now = time.Second
	n.Fire("ha.elect")
	assert.Empty(t, env.kinds(ha.EvTakeover), "cut off: nobody to serve")
	assert.False(t, n.IsPrimary())
}

// TestEqualEpochsEndWithOnePrimary: two hosts that took over from one view
// at the same epoch end with the later one in takeover order as primary
// everywhere, and the earlier one fenced.
func TestEqualEpochsEndWithOnePrimary(t *testing.T) {
	envA := &fakeEnv{}
	a := newChainNode(t, "A", envA)
	r1 := ha.Route{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"B.1"}}
	r2 := ha.Route{Frag: 1, Epoch: 1, Primary: "B.2", Receivers: []string{"B.2"}}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Epoch: 1, Route: &r2})
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.1", Frag: 1, Epoch: 1, Route: &r1})
	assert.Equal(t, "B.2", a.Route(1).Primary, "the later host wins whatever the arrival order")
	var told bool
	for _, s := range envA.sent {
		if s.to == "B.1" && s.m.Kind == ha.KindRoute && s.m.Route != nil && s.m.Route.Primary == "B.2" {
			told = true
		}
	}
	assert.True(t, told, "the host that announced the losing route is told the winning one")

	envB := &fakeEnv{}
	b1 := newChainNode(t, "B.1", envB)
	b1.PeerDown("B")
	b1.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A", Frag: 0, Route: &ha.Route{Frag: 0, Primary: "A", Receivers: []string{"A"}}})
	answerFromSink(b1)
	require.True(t, b1.IsPrimary())
	b1.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A", Frag: 0, Route: &r2})
	assert.False(t, b1.Fenced(), "a relayed route that would fence B.1 waits for B.2's word")
	require.True(t, probed(envB, "B.2"), "B.1 asks B.2 for its route")
	b1.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Epoch: 1, Route: &r2})
	assert.True(t, b1.Fenced(), "B.1 learns B.2 superseded it at the same epoch")
}

// TestRoutesAreChecked: a route naming a host outside the fragment, sent
// by a host outside it, or with an epoch far past the receiver's, changes
// nothing.
func TestRoutesAreChecked(t *testing.T) {
	env := &fakeEnv{}
	a := newChainNode(t, "A", env)
	forged := ha.Route{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"B.1"}}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "sink", Frag: 2, Route: &forged})
	assert.Equal(t, "B", a.Route(1).Primary, "a host outside B announces no route for B to A")
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Route: &forged})
	assert.Equal(t, "B.1", a.Route(1).Primary, "a host of B may")
	b2 := newChainNode(t, "B.2", &fakeEnv{})
	b2.Deliver(&ha.Message{Kind: ha.KindRoute, From: "sink", Frag: 2, Route: &forged})
	assert.Equal(t, "B.1", b2.Route(1).Primary, "a relay of B's route to a host of B is believed")
	for _, r := range []ha.Route{
		{Frag: 1, Epoch: 1, Primary: "evil", Receivers: []string{"evil"}},
		{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"A"}},
		{Frag: 1, Epoch: 1 << 63, Primary: "B.1", Receivers: []string{"B.1"}},
		{Frag: 1, Epoch: 5000, Primary: "B.1", Receivers: []string{"B.1"}},
		{Frag: 7, Epoch: 1, Primary: "B.1"},
	} {
		a := newChainNode(t, "A", &fakeEnv{})
		a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Route: &r})
		assert.Equal(t, "B", a.Route(1).Primary, "%+v", r)
		assert.Zero(t, a.Route(1).Epoch, "%+v", r)
	}
}

// TestGapIsRepairedFromTheSender: a receiver holds the tuples beyond a
// gap, asks for a resend from the gap, and takes the resent tuples and
// then the held ones in order; a sender that cannot fill the hole says so
// and the gap is taken.
func TestGapIsRepairedFromTheSender(t *testing.T) {
	data := func(seqs ...uint64) *ha.Message {
		m := &ha.Message{Kind: ha.KindData, From: "A", Frag: 0}
		for _, s := range seqs {
			m.Tuples = append(m.Tuples, ha.Tuple{Seq: s})
		}
		return m
	}
	delivered := func(env *fakeEnv) []uint64 {
		var out []uint64
		for _, ev := range env.kinds(ha.EvDeliver) {
			out = append(out, ev.Tuple.Seq)
		}
		return out
	}
	t.Run("filled", func(t *testing.T) {
		env := &fakeEnv{}
		s := newChainNode(t, "sink", env)
		s.Deliver(data(1, 2))
		s.Deliver(data(5, 6))
		require.Len(t, env.kinds(ha.EvRepair), 1)
		var resume *ha.Message
		for i := range env.sent {
			if env.sent[i].m.Kind == ha.KindResume {
				resume = &env.sent[i].m
			}
		}
		require.NotNil(t, resume, "a resend is asked for")
		assert.Equal(t, uint64(2), resume.Seq)
		assert.Equal(t, ha.ResumeRepairType, resume.Type)
		s.Deliver(data(3, 4, 5, 6))
		s.Deliver(&ha.Message{Kind: ha.KindData, From: "A", Type: ha.ReplayEndType, Seq: 6})
		s.Deliver(data(7))
		assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7}, delivered(env))
		assert.Empty(t, env.kinds(ha.EvGap), "nothing was lost")
	})
	t.Run("cannot be filled", func(t *testing.T) {
		env := &fakeEnv{}
		s := newChainNode(t, "sink", env)
		s.Deliver(data(1, 2))
		s.Deliver(data(5, 6))
		s.Deliver(&ha.Message{Kind: ha.KindData, From: "A", Type: ha.ReplayFromType, Seq: 6})
		s.Deliver(data(7))
		assert.Equal(t, []uint64{1, 2, 5, 6, 7}, delivered(env))
		gaps := env.kinds(ha.EvGap)
		require.Len(t, gaps, 1)
		assert.Equal(t, uint64(3), gaps[0].Seq)
		assert.Equal(t, int64(2), gaps[0].N)
	})
}

// TestAMissedRouteIsAskedFor: a host that declared its downstream
// fragment's primary dead and missed the new primary's route asks the
// fragment's live hosts for it RouteSeekDelay later, and again until it
// knows a live primary; then it stops asking.
func TestAMissedRouteIsAskedFor(t *testing.T) {
	env := &fakeEnv{}
	a := newChainNode(t, "A", env)
	a.PeerDown("B")
	require.Contains(t, env.timers, "ha.seek", "a neighbour lost its primary: the seek timer is armed")
	queries := func() []string {
		var to []string
		for _, s := range env.sent {
			if s.m.Kind == ha.KindRoute && s.m.Type == ha.RouteQueryType && s.m.Seq == 2 {
				to = append(to, s.to)
			}
		}
		env.sent = nil
		return to
	}
	env.now = ha.RouteSeekDelay
	a.Fire("ha.seek")
	assert.ElementsMatch(t, []string{"B.1", "B.2"}, queries(), "the live hosts of B are asked for B's route")
	env.timers = nil
	a.Fire("ha.seek")
	assert.ElementsMatch(t, []string{"B.1", "B.2"}, queries(), "no answer: asked again")
	require.Contains(t, env.timers, "ha.seek")

	r := ha.Route{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"B.1"}}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Route: &r})
	require.Equal(t, "B.1", a.Route(1).Primary, "the answer of any host of B is believed")
	env.timers = nil
	a.Fire("ha.seek")
	assert.Empty(t, queries(), "a live primary is known: no more questions")
	assert.NotContains(t, env.timers, "ha.seek")

	// A host of B answers a query naming B with its view of B's route.
	envB := &fakeEnv{}
	b2 := newChainNode(t, "B.2", envB)
	b2.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.1", Frag: 1, Epoch: 1, Route: &r})
	envB.sent = nil
	b2.Deliver(&ha.Message{Kind: ha.KindRoute, Type: ha.RouteQueryType, From: "A", Frag: 0, Seq: 2})
	require.Len(t, envB.sent, 1)
	assert.Equal(t, "A", envB.sent[0].to)
	assert.Equal(t, r, *envB.sent[0].m.Route)
}

// TestAReplayEndsTheHold: an upstream that replays to a new downstream
// primary on its own (as passive standby does when it learns the route)
// sends the live output it held for it right after the replay, even if
// that primary's resume request is lost: the replay's end marker already
// answered the request, so nobody would ever ask again.
func TestAReplayEndsTheHold(t *testing.T) {
	env := &fakeEnv{}
	a := newChainNode(t, "A", env)
	r := ha.Route{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"B.1"}, Resume: true}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.1", Frag: 1, Epoch: 1, Route: &r})
	a.Deliver(&ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource, Tuples: []ha.Tuple{{Seq: 1, Key: 1}, {Seq: 2, Key: 2}}})
	require.Empty(t, env.dataTo("B.1"), "held until the replay")
	a.Replay("B.1", 0)
	assert.Equal(t, []uint64{1, 2}, env.dataTo("B.1"), "the held output follows the replay")
}

// TestAHostSeesItsPrimaryAliveAgainAndAsksForTheRoute: a host that was
// cut off from its fragment's primary asks it for the fragment's route
// when it sees it alive again (it may have missed the routes of that
// time: a secondary dropped meanwhile must not take over later from its
// stale state, believing itself next in line).
func TestAHostSeesItsPrimaryAliveAgainAndAsksForTheRoute(t *testing.T) {
	env := &fakeEnv{}
	b1 := newChainNode(t, "B.1", env)
	b1.PeerDown("A") // not its fragment's primary: nothing to ask later
	b1.PeerUp("A")
	b1.PeerDown("B")
	env.sent = nil
	b1.PeerUp("B")
	var asked []string
	for _, s := range env.sent {
		if s.m.Kind == ha.KindRoute && s.m.Type == ha.RouteQueryType && s.m.Seq == 2 {
			asked = append(asked, s.to)
		}
	}
	assert.Equal(t, []string{"B"}, asked)
}

// TestANewGapIsRepairedThoughTheLastRepairEndedSilently: a repair whose
// replay filled the gap but whose end marker was lost stays pending; a
// later gap at a new position is asked for at once, not after the retry
// timer's next doubling.
func TestANewGapIsRepairedThoughTheLastRepairEndedSilently(t *testing.T) {
	env := &fakeEnv{}
	b := newChainNode(t, "B", env)
	data := func(seqs ...uint64) {
		var ts []ha.Tuple
		for _, s := range seqs {
			ts = append(ts, ha.Tuple{Seq: s, Key: 1})
		}
		b.Deliver(&ha.Message{Kind: ha.KindData, From: "A", Frag: 0, Tuples: ts})
	}
	repairs := func() []uint64 {
		var out []uint64
		for _, s := range env.sent {
			if s.to == "A" && s.m.Kind == ha.KindResume && s.m.Type == ha.ResumeRepairType {
				out = append(out, s.m.Seq)
			}
		}
		return out
	}
	data(1)
	data(3)
	require.Equal(t, []uint64{1}, repairs(), "the gap after 1 is asked for")
	data(2) // the replay fills it; its end marker is lost
	data(3, 4)
	assert.Equal(t, []uint64{1}, repairs(), "no new gap: nothing more to ask")
	data(6)
	assert.Equal(t, []uint64{1, 4}, repairs(), "a gap at a new position is asked for at once")
}

// TestAReceiverChangeNeverOutranksATakeover: a primary that replaced its
// secondaries (new versions of its route) while another host took over
// from it never wins: the takeover's epoch decides, in either order.
func TestAReceiverChangeNeverOutranksATakeover(t *testing.T) {
	old := ha.Route{Frag: 1, Epoch: 0, Version: 5, Primary: "B", Receivers: []string{"B", "B.2"}}
	takeover := ha.Route{Frag: 1, Epoch: 1, Primary: "B.1", Receivers: []string{"B.1"}}
	for _, order := range [][]ha.Route{{old, takeover}, {takeover, old}} {
		env := &fakeEnv{}
		a := newChainNode(t, "A", env)
		for _, r := range order {
			a.Deliver(&ha.Message{Kind: ha.KindRoute, From: r.Primary, Frag: 1, Epoch: r.Epoch, Route: &r})
		}
		assert.Equal(t, "B.1", a.Route(1).Primary)
	}
	env := &fakeEnv{}
	a := newChainNode(t, "A", env)
	for v := uint64(1); v <= 2; v++ {
		r := ha.Route{Frag: 1, Version: v, Primary: "B", Receivers: []string{"B", "B.2"}}
		a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B", Frag: 1, Route: &r})
	}
	stale := ha.Route{Frag: 1, Version: 1, Primary: "B", Receivers: []string{"B", "B.1"}}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B", Frag: 1, Route: &stale})
	assert.Equal(t, uint64(2), a.Route(1).Version, "a later version of the same primary's route replaces an earlier one, never the reverse")
	assert.Equal(t, []string{"B", "B.2"}, a.Route(1).Receivers)
}
