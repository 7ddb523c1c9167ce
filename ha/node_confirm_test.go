package ha_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// forger wraps a strategy so that one host sends one forged route during
// the run: at, to host to, for fragment frag, naming primary at the
// epoch the forger knows plus jump. Every other behaviour is the
// strategy's.
type forger struct {
	ha.Strategy
	host, to, primary string
	frag              int
	at                time.Duration
	jump              uint64
}

func (f forger) Hooks(n *ha.Node) ha.Hooks {
	h := f.Strategy.Hooks(n)
	if n.Host() != f.host {
		return h
	}
	return &forgeHooks{Hooks: h, f: f, n: n}
}

type forgeHooks struct {
	ha.Hooks
	f forger
	n *ha.Node
}

const forgeTimer = "test.forge"

func (h *forgeHooks) Start() {
	h.Hooks.Start()
	h.n.SetTimer(h.f.at, forgeTimer)
}

func (h *forgeHooks) Timer(name string) {
	if name != forgeTimer {
		h.Hooks.Timer(name)
		return
	}
	r := h.n.Route(h.f.frag)
	forged := ha.Route{Frag: h.f.frag, Epoch: r.Epoch + h.f.jump, Primary: h.f.primary, Receivers: []string{h.f.primary}}
	h.n.Send(h.f.to, &ha.Message{Kind: ha.KindRoute, Route: &forged})
}

// TestForgedRouteFencesNobody: one route message forged at 1 s — relayed
// by the source to B, naming B.1 primary of B at an epoch 1024 past B's,
// or 1 past it — used to make B fence itself while B.1 stayed secondary:
// every later output missing. B now asks B.1, whose answer shows the
// claim false: the run stays precise. With the confirmation undone
// (PlantTrustRoutes) B fences itself, and under passive standby the run
// loses its output.
func TestForgedRouteFencesNobody(t *testing.T) {
	t.Parallel()
	const yaml = `name: forged
seed: %d
duration: 3s
drain: 1s
source: {rate: 800, keys: 16, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
network: {latency: 1ms, jitter: 200us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
`
	for _, name := range []string{"passive-standby", "active-standby"} {
		for _, jump := range []uint64{1, 1024} {
			t.Run(fmt.Sprintf("%s/epoch +%d", name, jump), func(t *testing.T) {
				t.Parallel()
				e, err := experiment.Parse([]byte(fmt.Sprintf(yaml, 1)), t.Name())
				require.NoError(t, err)
				ref, err := sim.ReferenceTrace(e)
				require.NoError(t, err)
				run := func(p ha.Planted) (*ha.Trace, metrics.Recovery) {
					info, err := strategies.Lookup(name)
					require.NoError(t, err)
					params, err := info.Parse(e.ParamsFor(name))
					require.NoError(t, err)
					st, err := info.New(params)
					require.NoError(t, err)
					f := forger{Strategy: st, host: "src", to: "B", primary: "B.1", frag: 1, at: time.Second, jump: jump}
					cfg, err := sim.ConfigFor(e, f, false)
					require.NoError(t, err)
					cfg.Planted = p
					out, err := sim.Run(cfg)
					require.NoError(t, err)
					rec, _ := metrics.ClassifyRecovery(ref, out.Trace)
					return out.Trace, rec
				}
				tr, rec := run(0)
				requireNote(t, tr, "B", "route held until B.1 confirms it")
				assert.Equal(t, "precise", rec.Type, "%v", rec.Explanations)
				assert.Zero(t, rec.Missing)
				for _, ev := range tr.Events() {
					assert.False(t, ev.Kind == ha.EvFenced && ev.Host == "B", "B fenced itself at %s", ev.T)
				}

				tr, rec = run(ha.PlantTrustRoutes)
				requireEvent(t, tr, ha.EvFenced, "B")
				if name == "passive-standby" {
					assert.Positive(t, rec.Missing, "with trust-routes planted the forged route stops the job")
				}
			})
		}
	}
}

// requireNote fails unless host traced a note containing text.
func requireNote(t *testing.T, tr *ha.Trace, host, text string) {
	t.Helper()
	for _, ev := range tr.Events() {
		if ev.Kind == ha.EvNote && ev.Host == host && strings.Contains(ev.Note, text) {
			return
		}
	}
	require.Failf(t, "trigger missing", "no note %q of %s: the schedule did not exercise its rule", text, host)
}

// TestRoutesThatFenceOrJumpWaitForTheirPrimary: node by node, a route
// that would fence its receiver or jump epochs is applied only on its
// named primary's own word; a route from the receiver's own name, or
// naming the receiver primary, never.
func TestRoutesThatFenceOrJumpWaitForTheirPrimary(t *testing.T) {
	env := &fakeEnv{}
	b := newChainNode(t, "B", env)
	claim := ha.Route{Frag: 1, Epoch: 1024, Primary: "B.1", Receivers: []string{"B.1"}}

	b.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B", Frag: 1, Route: &claim})
	assert.True(t, b.IsPrimary(), "a route claiming to come from B itself is ignored")
	assert.False(t, probed(env, "B.1"))

	b.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A", Frag: 0, Route: &claim})
	assert.True(t, b.IsPrimary(), "a relayed route that would fence B waits")
	require.True(t, probed(env, "B.1"), "B asks B.1")
	real := ha.Route{Frag: 1, Epoch: 0, Primary: "B", Receivers: []string{"B"}}
	b.Deliver(&ha.Message{Kind: ha.KindRoute, Type: ha.RouteToldType, From: "B.1", Frag: 1, Route: &real})
	assert.True(t, b.IsPrimary(), "B.1's own view shows the claim false")
	assert.False(t, b.Fenced())

	self := ha.Route{Frag: 1, Epoch: 7, Primary: "B", Receivers: []string{"B"}}
	b.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Route: &self})
	assert.Equal(t, uint64(0), b.Epoch(), "a route naming B primary at an epoch B never took is ignored")

	envA := &fakeEnv{}
	a := newChainNode(t, "A", envA)
	jump := ha.Route{Frag: 1, Epoch: 5, Primary: "B.2", Receivers: []string{"B.2"}}
	a.Deliver(&ha.Message{Kind: ha.KindRoute, From: "B.2", Frag: 1, Epoch: 5, Route: &jump})
	assert.Equal(t, "B", a.Route(1).Primary, "an epoch jump waits")
	require.True(t, probed(envA, "B.2"))
	a.Deliver(&ha.Message{Kind: ha.KindRoute, Type: ha.RouteToldType, From: "B.2", Frag: 1, Epoch: 5, Route: &jump})
	assert.Equal(t, "B.2", a.Route(1).Primary, "B.2's answer confirms it")

	envT := &fakeEnv{}
	trusting, err := ha.NewNode(ha.NodeConfig{Host: "B", Topology: chainTopology(), Env: envT, Strategy: strategies.Amnesia{}, Planted: ha.PlantTrustRoutes})
	require.NoError(t, err)
	trusting.Start()
	trusting.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A", Frag: 0, Route: &claim})
	assert.True(t, trusting.Fenced(), "with trust-routes planted one message fences B")
}
