package upstreambackup

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInputTimesCut(t *testing.T) {
	var l inputTimes
	// Inputs 1..10 at 0.4 ms intervals: segments span 1 ms of event time.
	for s := uint64(1); s <= 10; s++ {
		l.add(s, int64(s)*4*ms/10)
	}
	// Segments span less than 1 ms of event time each.
	require.Equal(t, []segment{
		{first: 1, last: 3, firstT: 4 * ms / 10, maxT: 12 * ms / 10},
		{first: 4, last: 6, firstT: 16 * ms / 10, maxT: 24 * ms / 10},
		{first: 7, last: 9, firstT: 28 * ms / 10, maxT: 36 * ms / 10},
		{first: 10, last: 10, firstT: 4 * ms, maxT: 4 * ms},
	}, l.segs)
	tests := []struct {
		horizon int64
		cut     uint64
		ok      bool
	}{
		{0, 0, false},           // nothing is older than 0
		{ms / 2, 0, false},      // inside the first segment: conservatively nothing
		{2 * ms, 3, true},       // inside the second segment: up to the first
		{25 * ms / 10, 6, true}, // just after the second segment
		{10 * ms, 10, true},     // everything
	}
	for _, tt := range tests {
		cut, ok := l.cut(tt.horizon)
		assert.Equal(t, tt.ok, ok, "horizon %d", tt.horizon)
		assert.Equal(t, tt.cut, cut, "horizon %d", tt.horizon)
	}
	l.drop(5) // only whole segments go: 4..6 is kept
	assert.Equal(t, 3, l.size())
	cut, ok := l.cut(10 * ms)
	assert.True(t, ok)
	assert.Equal(t, uint64(10), cut)
	last, ok := l.lastSeq()
	assert.True(t, ok)
	assert.Equal(t, uint64(10), last)
	// A gap in the seqs starts a new segment.
	l.add(12, 4*ms)
	assert.Equal(t, 4, l.size())
	l.reset()
	_, ok = l.lastSeq()
	assert.False(t, ok)
}

// TestInputTimesCompactsInPlace: dropping most of a long log moves the live
// segments to the front of the same array, so the appends of the next ack
// rounds neither allocate nor copy; what is left reads as before.
func TestInputTimesCompactsInPlace(t *testing.T) {
	var l inputTimes
	for s := uint64(1); s <= 2000; s++ {
		l.add(2*s, int64(s)*ms) // gaps in the seqs: one segment each
	}
	capBefore := cap(l.segs)
	l.drop(2 * 1500)
	require.Zero(t, l.head, "compacted")
	assert.Equal(t, 500, l.size())
	assert.Equal(t, capBefore, cap(l.segs), "same array")
	assert.Equal(t, segment{first: 3002, last: 3002, firstT: 1501 * ms, maxT: 1501 * ms}, l.segs[0])
	cut, ok := l.cut(1600 * ms)
	assert.True(t, ok)
	assert.Equal(t, uint64(2*1599), cut)
	next := uint64(4002)
	allocs := testing.AllocsPerRun(100, func() {
		l.add(next, int64(next)*ms)
		next += 2
	})
	assert.Zero(t, allocs, "appends after the compaction reuse the array")
}

// TestInputTimesCutMatchesAScan: the binary searches of cut and drop give
// what a scan of the live segments gives, for event times that ascend
// (searched) and that sometimes go back (scanned until the disorder is
// dropped), across compactions.
func TestInputTimesCutMatchesAScan(t *testing.T) {
	scan := func(l *inputTimes, horizon int64) (uint64, bool) {
		live := l.segs[l.head:]
		i := 0
		for i < len(live) && live[i].maxT < horizon {
			i++
		}
		if i == 0 {
			return 0, false
		}
		return live[i-1].last, true
	}
	for _, back := range []int{0, 50} { // chance in 1000 that an input's time goes back
		rng := rand.New(rand.NewPCG(7, uint64(back)))
		var l inputTimes
		seq, now := uint64(0), int64(0)
		searched := 0
		for step := range 20000 {
			seq += 1 + uint64(rng.IntN(100)/98) // an occasional gap
			now += int64(rng.IntN(700)) * 1000
			tm := now
			if rng.IntN(1000) < back {
				tm -= int64(rng.IntN(5)) * ms
			}
			l.add(seq, tm)
			if step%5 == 0 {
				for range 5 {
					hz := now - int64(rng.IntN(800))*ms
					wc, wok := scan(&l, hz)
					c, ok := l.cut(hz)
					require.Equal(t, wok, ok, "step %d horizon %d", step, hz)
					require.Equal(t, wc, c, "step %d horizon %d", step, hz)
					if l.unordered <= l.head {
						searched++
					}
				}
				if live := slices.Clone(l.segs[l.head:]); len(live) > 40 && step%25 == 0 {
					// Up to a random segment's last seq, or just short of it.
					c := live[rng.IntN(len(live)-20)].last - uint64(rng.IntN(2))
					l.drop(c)
					for _, sg := range live {
						if sg.last > c {
							require.Equal(t, sg, l.segs[l.head], "the first segment kept")
							break
						}
					}
				}
			}
		}
		assert.Positive(t, searched, "some cuts were binary searches")
	}
}

func TestInputTimesNonMonotone(t *testing.T) {
	var l inputTimes
	l.add(1, 5*ms)
	l.add(2, 1*ms) // earlier than the segment start: a new segment
	l.add(3, 9*ms)
	// Horizon 6 ms: seq 1 is before it, seq 2 too, seq 3 is not.
	cut, ok := l.cut(6 * ms)
	assert.True(t, ok)
	assert.Equal(t, uint64(2), cut)
	// Horizon 3 ms: seq 1 (5 ms) is not before it, so nothing can be cut.
	_, ok = l.cut(3 * ms)
	assert.False(t, ok)

	// Largest times 20, 15, 30, 40, 50 ms after dropping the first
	// segment: the time going back is live, so no binary search — one
	// would try 30 first, then 15, and cut after seq 11 (15 ms) though seq
	// 10 (20 ms) is not before the horizon.
	l.reset()
	for i, tm := range []int64{10, 20, 15, 30, 40, 50} {
		l.add(uint64(9+i), tm*ms)
	}
	l.drop(9)
	_, ok = l.cut(18 * ms)
	assert.False(t, ok, "seq 10 at 20 ms is not before 18 ms")
	cut, ok = l.cut(35 * ms)
	assert.True(t, ok)
	assert.Equal(t, uint64(12), cut)
	l.drop(10) // the time going back is the first live segment now
	cut, ok = l.cut(18 * ms)
	assert.True(t, ok)
	assert.Equal(t, uint64(11), cut)
}
