package upstreambackup

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// BenchmarkHotFieldsShareALine reports the layout the hooks' comment
// describes: what Output and Input read for every tuple should lie in the
// first 64 bytes of hooks, and the allocator should place hooks on 64-byte
// boundaries. A field added in the wrong place costs a cache miss per
// message in cluster mode. It allocates hooks as a node does and reports
// hot-bytes, where the last hot field ends (target ≤ 64), and misaligned,
// the share of allocations not on a 64-byte boundary (target 0; above
// 512 bytes an object with pointers gets an 8-byte header). This is a
// measurement, not a pass/fail test: the allocator decides addresses.
//
//	go test -run '^$' -bench HotFieldsShareALine ./upstreambackup
func BenchmarkHotFieldsShareALine(b *testing.B) {
	var h hooks
	hot := max(
		unsafe.Offsetof(h.n)+unsafe.Sizeof(h.n),
		unsafe.Offsetof(h.peak)+unsafe.Sizeof(h.peak),
		unsafe.Offsetof(h.order)+unsafe.Sizeof(h.order),
		unsafe.Offsetof(h.maxTuples)+unsafe.Sizeof(h.maxTuples),
		unsafe.Offsetof(h.maxAge)+unsafe.Sizeof(h.maxAge),
		unsafe.Offsetof(h.ticking)+1,
		unsafe.Offsetof(h.records)+1,
		unsafe.Offsetof(h.filters)+1,
	)
	e := experiment.Default()
	st, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	topo := e.Topology(st)
	env := &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}
	misaligned := 0
	for b.Loop() {
		n, err := ha.NewNode(ha.NodeConfig{Host: "B", Topology: topo, Env: env, Strategy: st})
		if err != nil {
			b.Fatal(err)
		}
		if uintptr(unsafe.Pointer(st.Hooks(n).(*hooks)))%64 != 0 {
			misaligned++
		}
	}
	b.ReportMetric(float64(hot), "hot-bytes")
	b.ReportMetric(float64(misaligned)/float64(b.N), "misaligned")
}

// TestInputHookOnlyWhenNeeded: the node calls upstream backup's Input only
// on hosts with work for every tuple — stopped ack rounds to restart, or
// dedup — so a busy host's input path costs what it costs without HA; a
// windowed fragment's input times are recorded by the node itself.
func TestInputHookOnlyWhenNeeded(t *testing.T) {
	e := experiment.Default()
	for _, tc := range []struct {
		host   string
		dedup  bool
		ticked bool // the ack rounds run
		want   bool
	}{
		{host: "A", ticked: true, want: false},              // a filter and a map
		{host: "A", ticked: false, want: true},              // idle: the next input restarts the rounds
		{host: "A", ticked: true, dedup: true, want: false}, // fed by the source: no dedup memory
		{host: "B", ticked: true, want: true},               // a window: Input records the input times
		{host: "B", ticked: false, want: true},
		{host: "C", ticked: true, want: false}, // a map
		{host: "C", ticked: true, dedup: true, want: true},
		{host: "sink", ticked: true, dedup: true, want: true},
		{host: "sink", ticked: true, want: false},
	} {
		cfg := DefaultConfig()
		cfg.Dedup = tc.dedup
		st, err := New(cfg)
		require.NoError(t, err)
		n, err := ha.NewNode(ha.NodeConfig{Host: tc.host, Topology: e.Topology(st), Env: &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}, Strategy: st})
		require.NoError(t, err)
		h := st.Hooks(n).(*hooks)
		h.ticking = tc.ticked
		h.syncInputHook()
		assert.Equal(t, tc.want, h.needsInput(), "%s dedup=%v ticking=%v", tc.host, tc.dedup, tc.ticked)
	}
}

// TestInputTimesFollowThePortPosition: a windowed fragment records what each
// input port accepted — not what the node's seq filter dropped — and the
// record starts afresh whenever the port's position does: a new upstream
// numbering (a route with ResetSeq), a restart on a spare.
func TestInputTimesFollowThePortPosition(t *testing.T) {
	e := experiment.Default()
	st, err := New(DefaultConfig())
	require.NoError(t, err)
	cs := &capturing{Strategy: st}
	b, err := ha.NewNode(ha.NodeConfig{Host: "B", Topology: e.Topology(st), Env: &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}, Strategy: cs})
	require.NoError(t, err)
	h := cs.h
	require.True(t, h.records, "B holds a window")
	b.Start()
	data := func(from string, epoch uint64, seqs ...uint64) {
		m := &ha.Message{Kind: ha.KindData, From: from, Frag: 0, Epoch: epoch}
		for _, s := range seqs {
			m.Tuples = append(m.Tuples, ha.Tuple{Seq: s, Time: int64(s) * ms, ID: ha.OutputID{Kind: ha.IDSource, X: int64(s)}})
		}
		b.Deliver(m)
	}
	rec := &h.times[0]
	data("A", 0, 1, 2, 3)
	data("A", 0, 2, 3) // dropped by the seq filter: not recorded again
	last, ok := rec.lastSeq()
	require.True(t, ok)
	assert.Equal(t, uint64(3), last)
	assert.Equal(t, 3, rec.size(), "a segment per millisecond of event time")
	cut, ok := rec.cut(3 * ms)
	require.True(t, ok)
	assert.Equal(t, uint64(2), cut, "every input up to 2 is before 3 ms")

	// A.1 takes A's place and numbers afresh: so does the record.
	b.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A.1", Frag: 0, Epoch: 1,
		Route: &ha.Route{Frag: 0, Epoch: 1, Primary: "A.1", Receivers: []string{"A.1"}, ResetSeq: true}})
	assert.Zero(t, rec.size())
	data("A.1", 1, 1, 2)
	assert.Equal(t, 2, rec.size())

	// A renumbering the hooks were not told of starts the record afresh too.
	rec.add(1, 9*ms)
	last, _ = rec.lastSeq()
	assert.Equal(t, uint64(1), last)
	assert.Equal(t, 1, rec.size())

	// A restart (B's fragment on a spare) forgets the inputs.
	h.TakeOver()
	assert.Zero(t, rec.size(), "a restart forgets the inputs")
}

// capturing is the strategy with a handle on the hooks it gave its node.
type capturing struct {
	*Strategy
	h *hooks
}

func (c *capturing) Hooks(n *ha.Node) ha.Hooks {
	c.h = c.Strategy.Hooks(n).(*hooks)
	return c.h
}
