package ops

import (
	"testing"

	"github.com/streamha/streamha/ha"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pair(key uint32, l, r int64, v float64, end int64) ha.Tuple {
	return ha.Tuple{
		Key:     key,
		ID:      ha.OutputID{Kind: ha.IDPair, Key: key, X: l<<32 | r},
		Time:    end,
		Emit:    end,
		Value:   v,
		Lineage: lin(ha.SourceLineage(0, l), ha.SourceLineage(1, r)),
	}
}

func TestJoin(t *testing.T) {
	ms := sec / 1000
	L := func(key uint32, tm int64, v float64, n int64) ha.Tuple { return src(0, key, tm, v, 0, n) }
	R := func(key uint32, tm int64, v float64, n int64) ha.Tuple { return src(1, key, tm, v, 1, n) }
	steps := []struct {
		in   ha.Tuple
		want []ha.Tuple
	}{
		{L(1, 500*ms, 3, 3), nil},
		{R(1, 200*ms, 10, 1), nil},
		{L(2, 300*ms, 2, 2), nil},
		{R(2, 400*ms, 20, 2), nil},
		{L(1, 100*ms, 1, 1), nil}, // smaller source number arrives later
		{R(1, 600*ms, 30, 3), nil},
		{L(5, 700*ms, 9, 4), nil},  // no partner
		{L(3, 1500*ms, 5, 6), nil}, // left at 1.5s, right at 0.6s: watermark 0.6s
		{R(9, 1100*ms, 0, 4), []ha.Tuple{ // watermark 1.1s closes [0,1s)
			pair(1, 1, 1, 11, sec), pair(1, 1, 3, 31, sec), pair(1, 3, 1, 13, sec), pair(1, 3, 3, 33, sec),
			pair(2, 2, 2, 22, sec),
		}},
		{L(1, 900*ms, 100, 7), nil}, // late
		{R(3, 1700*ms, 50, 5), nil},
		{L(0, 2500*ms, 1, 8), nil},
		{R(0, 2000*ms, 1, 6), []ha.Tuple{pair(3, 6, 5, 55, 2*sec)}},
	}
	op := mustNew(t, "join", map[string]any{"window": "1s"})
	for i, s := range steps {
		out := feed(op, []ha.Tuple{s.in})
		assert.Equal(t, s.want, out, "step %d", i)
	}
	assert.Equal(t, 1, op.(LateCounter).Late())
	assert.Equal(t, 2, op.(ha.Sizer).StateEntries())
	assert.Equal(t, "k01|s0:3*s1:1", pair(1, 3, 1, 0, 0).ID.String())
}

func TestJoinWaitsForBothPorts(t *testing.T) {
	op := mustNew(t, "join", map[string]any{"window": "1s"})
	var in []ha.Tuple
	for i := range 10 {
		in = append(in, src(0, 1, int64(i)*sec, 1, 0, int64(i)))
	}
	assert.Empty(t, feed(op, in), "a port never seen holds the watermark at -inf")
	_, ok := op.(ha.Horizon).Oldest()
	assert.True(t, ok)
	assert.Zero(t, op.(LateCounter).Late())
}

// TestJoinReplayIsRepeatable: a join restarted with empty state and fed the
// input again from an earlier point re-emits only pairs identical to the
// originals, and from the first complete window on exactly the originals.
func TestJoinReplayIsRepeatable(t *testing.T) {
	in := workloadDisorder(3, 3000, 4, 0)
	params := map[string]any{"window": "1s"}
	want := feed(mustNew(t, "join", params), in)
	require.NotEmpty(t, want)
	orig := map[ha.Tuple]bool{}
	for _, o := range want {
		orig[o] = true
	}
	for _, cut := range []int{0, 1, 700, 1500, 2999} {
		got := feed(mustNew(t, "join", params), in[cut:])
		for _, o := range got {
			assert.True(t, orig[o], "cut %d: replayed %v is identical to an original", cut, o)
		}
		// windows starting after the replay point are re-emitted completely
		from := (in[cut].Time/sec + 1) * sec
		var wantTail, gotTail []ha.Tuple
		for _, o := range want {
			if o.Time-sec >= from {
				wantTail = append(wantTail, o)
			}
		}
		for _, o := range got {
			if o.Time-sec >= from {
				gotTail = append(gotTail, o)
			}
		}
		assert.Equal(t, wantTail, gotTail, "cut %d", cut)
	}
}
