package sim

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// runRecycling simulates cfg with the recycling of delivered data messages
// on or off and returns the trace and how many copies reused a message.
func runRecycling(t *testing.T, cfg Config, recycle bool) (*ha.Trace, int) {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	s.pool.off = !recycle
	s.Loop()
	return s.Outcome().Trace, s.pool.reused
}

// requireSameTrace fails at the first event where a and b differ.
func requireSameTrace(t *testing.T, a, b *ha.Trace) {
	t.Helper()
	ea, eb := a.Slice(), b.Slice()
	for i := range min(len(ea), len(eb)) {
		require.Equal(t, ea[i], eb[i], "event %d of %d", i, len(ea))
	}
	require.Len(t, eb, len(ea))
}

// recyclingCase is one simulated run of TestRecyclingChangesNothing.
type recyclingCase struct {
	name string
	cfg  Config
}

// recyclingCases are the examples under every strategy, and soak cases
// (losses, corruption, partitions, pauses, repeated crashes).
func recyclingCases(t *testing.T) []recyclingCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	require.NoError(t, err)
	var cases []recyclingCase
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "sweep") {
			continue
		}
		e, err := experiment.Load(f)
		require.NoError(t, err)
		for _, name := range strategies.Names(true) {
			st, err := strategies.Build(name, e.ParamsFor(name))
			require.NoError(t, err)
			cfg, err := ConfigFor(e, st, false)
			if err != nil {
				continue // a fault names a host this strategy does not have
			}
			cases = append(cases, recyclingCase{filepath.Base(f) + "/" + name, cfg})
		}
	}
	for _, strategy := range SoakStrategies() {
		for run := range uint64(3) {
			c, err := GenerateSoakCase(5, strategy, run)
			require.NoError(t, err)
			st, err := buildStrategy(c)
			require.NoError(t, err)
			cfg, err := ConfigFor(c.Experiment, st, false)
			require.NoError(t, err)
			cases = append(cases, recyclingCase{"soak/" + c.ID(), cfg})
		}
	}
	return cases
}

// TestRecyclingChangesNothing: no node, strategy or trace consumer reads a
// delivered message after the simulator took it back, since every run
// gives the same trace with recycling on as with it off (a recycled
// message is zeroed and its batch cleared, then reused, so a late reader
// sees other fields and tuples).
func TestRecyclingChangesNothing(t *testing.T) {
	t.Parallel()
	cases := recyclingCases(t)
	// Every registered strategy (strategies/all, which this package's
	// tests import) runs at least one example.
	for _, name := range strategies.Names(true) {
		assert.True(t, slices.ContainsFunc(cases, func(c recyclingCase) bool { return strings.HasSuffix(c.name, "/"+name) }), "no case runs %s", name)
	}
	assert.Contains(t, strategies.Names(true), "global-checkpoint", "the whole registry")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			on, reused := runRecycling(t, c.cfg, true)
			off, none := runRecycling(t, c.cfg, false)
			assert.Positive(t, reused, "messages were recycled")
			assert.Zero(t, none)
			requireSameTrace(t, off, on)
		})
	}
}

// keeper is a strategy whose hooks break the rule of ha.Hooks.Message: they
// keep the last delivered data batch and trace its first seq later.
type keeper struct{}

func (keeper) Name() string                             { return "test-keeper" }
func (keeper) Replicas() int                            { return 1 }
func (keeper) InitialReceivers(hosts []string) []string { return hosts[:1] }
func (keeper) Hooks(n *ha.Node) ha.Hooks                { return &keeperHooks{n: n} }

type keeperHooks struct {
	ha.NopHooks
	n    *ha.Node
	kept []ha.Tuple
}

func (h *keeperHooks) Message(m *ha.Message) bool {
	if m.Kind != ha.KindData {
		return false
	}
	if len(h.kept) > 0 {
		h.n.Trace(ha.Event{Kind: ha.EvNote, Seq: h.kept[0].Seq, Note: "kept batch"})
	}
	h.kept = m.Tuples
	return false
}

// TestRecyclingComparisonSeesKeptBatches: the comparison of
// TestRecyclingChangesNothing catches a consumer that keeps a delivered
// batch.
func TestRecyclingComparisonSeesKeptBatches(t *testing.T) {
	t.Parallel()
	cfg, err := ConfigFor(experiment.Default(), keeper{}, false)
	require.NoError(t, err)
	on, _ := runRecycling(t, cfg, true)
	off, _ := runRecycling(t, cfg, false)
	require.Equal(t, off.Len(), on.Len())
	assert.NotEqual(t, off.Slice(), on.Slice(), "a kept batch was overwritten under recycling")
}

// TestRecyclerClasses: batches come back by power-of-two capacity and a
// copy never shares memory with the message it copies.
func TestRecyclerClasses(t *testing.T) {
	var r recycler
	src := &ha.Message{Kind: ha.KindData, Tuples: make([]ha.Tuple, 5)}
	src.Tuples[4].Seq = 9
	c := r.copyMessage(src)
	require.Len(t, c.Tuples, 5)
	assert.Equal(t, 8, cap(c.Tuples))
	assert.Equal(t, uint64(9), c.Tuples[4].Seq)
	assert.NotSame(t, &src.Tuples[0], &c.Tuples[0])
	r.release(c)
	assert.Equal(t, ha.Message{}, *c, "a released message is cleared")

	d := r.copyMessage(&ha.Message{Kind: ha.KindData, Tuples: make([]ha.Tuple, 7)})
	assert.Same(t, c, d, "the message is reused")
	assert.Equal(t, 8, cap(d.Tuples))
	assert.Equal(t, 1, r.reused)

	big := r.copyMessage(&ha.Message{Tuples: make([]ha.Tuple, 1<<maxPooledClass+1)})
	r.release(big)
	for cl, free := range r.batches {
		assert.Empty(t, free, "class %d: an oversized batch is not kept", cl)
	}
}
