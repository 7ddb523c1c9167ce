package ha_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// holdAll is a test strategy whose hooks hold every data message's tuples
// and hand them to the node with Inject when the timer "release" fires.
type holdAll struct{ hooks *holdHooks }

func (holdAll) Name() string                             { return "hold-all" }
func (holdAll) Replicas() int                            { return 1 }
func (holdAll) InitialReceivers(hosts []string) []string { return hosts[:1] }
func (s holdAll) Hooks(n *ha.Node) ha.Hooks {
	if n.Host() != "A" {
		return ha.NopHooks{}
	}
	s.hooks.n = n
	return s.hooks
}

type holdHooks struct {
	ha.NopHooks
	n        *ha.Node
	held     []ha.Tuple
	messages int // data messages the hook saw
}

func (h *holdHooks) Message(m *ha.Message) bool {
	if m.Kind != ha.KindData {
		return false
	}
	h.messages++
	h.held = append(h.held, m.Tuples...) // lent for the call: copied
	return true
}

func (h *holdHooks) Timer(name string) {
	if name == "release" {
		h.n.Inject(0, h.held)
	}
}

func TestInjectProcessesHeldInputWithoutReenteringTheHooks(t *testing.T) {
	env := &fakeEnv{}
	hooks := &holdHooks{}
	a, err := ha.NewNode(ha.NodeConfig{Host: "A", Topology: testTopology(), Env: env, Strategy: holdAll{hooks}})
	require.NoError(t, err)
	a.Start()
	batch := []ha.Tuple{{Seq: 1}, {Seq: 2}, {Seq: 3}}
	a.Deliver(&ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource, Tuples: slices.Clone(batch)})
	assert.Equal(t, uint64(0), a.InputSeq(0), "held input is not processed")
	assert.Empty(t, env.dataTo("sink"))

	a.Fire("release")
	assert.Equal(t, uint64(3), a.InputSeq(0), "injected input is processed")
	assert.Equal(t, []uint64{1, 2, 3}, env.dataTo("sink"), "and its output sent before Inject returns")
	assert.Equal(t, 1, hooks.messages, "Hooks.Message does not see injected input again")

	a.Fire("release")
	assert.Equal(t, []uint64{1, 2, 3}, env.dataTo("sink"), "injected input passes the duplicate filter")
}

func TestStatusIsWhatTheNodeSays(t *testing.T) {
	env := &fakeEnv{}
	a, err := ha.NewNode(ha.NodeConfig{Host: "A", Topology: testTopology(), Env: env, Strategy: holdAll{&holdHooks{}}})
	require.NoError(t, err)
	a.Start()
	a.PeerDown("A.1")
	a.PeerDown("src")
	st := a.Status()
	assert.Equal(t, ha.Status{Host: "A", Role: "primary", Frag: 0, Epoch: a.Epoch(), OutputSeq: a.OutputSeq(), Retained: a.OutputLen(),
		InputSeqs: []uint64{0}, Down: []string{"src", "A.1"}, Routes: []ha.Route{a.Route(0)}}, st, "down hosts in topology order")
	st.Routes[0].Receivers[0] = "changed"
	assert.Equal(t, "A", a.Route(0).Receivers[0], "the status holds copies")
}
