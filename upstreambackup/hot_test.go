package upstreambackup

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// TestHotFieldsShareALine guards the layout the hooks' comment promises:
// what Output and Input read for every tuple lies in the first 64 bytes,
// and the allocator places hooks on 64-byte boundaries. An added field in
// the wrong place costs a cache miss per message in cluster mode and no
// other test would notice.
func TestHotFieldsShareALine(t *testing.T) {
	var h hooks
	for name, end := range map[string]uintptr{
		"n":         unsafe.Offsetof(h.n) + unsafe.Sizeof(h.n),
		"peak":      unsafe.Offsetof(h.peak) + unsafe.Sizeof(h.peak),
		"order":     unsafe.Offsetof(h.order) + unsafe.Sizeof(h.order),
		"maxTuples": unsafe.Offsetof(h.maxTuples) + unsafe.Sizeof(h.maxTuples),
		"maxAge":    unsafe.Offsetof(h.maxAge) + unsafe.Sizeof(h.maxAge),
		"ticking":   unsafe.Offsetof(h.ticking) + 1,
		"records":   unsafe.Offsetof(h.records) + 1,
		"filters":   unsafe.Offsetof(h.filters) + 1,
	} {
		assert.LessOrEqual(t, end, uintptr(64), "%s ends past the first line", name)
	}
	e := sim.Default()
	st, err := New(DefaultConfig())
	require.NoError(t, err)
	for range 50 {
		n, err := ha.NewNode(ha.NodeConfig{Host: "B", Topology: e.Topology(st), Env: &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}, Strategy: st})
		require.NoError(t, err)
		p := uintptr(unsafe.Pointer(st.Hooks(n).(*hooks)))
		require.Zero(t, p%64, "hooks at %#x are not 64-byte aligned (size %d: above 512 bytes an object with pointers has an 8-byte header)", p, unsafe.Sizeof(h))
	}
}

// TestInputHookOnlyWhenNeeded: the node calls upstream backup's Input only
// on hosts with work for every tuple — stopped ack rounds to restart, or
// dedup — so a busy host's input path costs what it costs without HA; a
// windowed fragment's input times are recorded by the node itself.
func TestInputHookOnlyWhenNeeded(t *testing.T) {
	e := sim.Default()
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
