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
		{host: "B", ticked: true, want: false},              // a window: the node records input times
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
