package cluster

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// armedTimer is a timer a test arms: at, and its name.
type armedTimer struct {
	at   time.Duration
	name string
}

// TestTimerQueue: timers fire in time order, those due at one instant in
// the order they were armed; a timer armed while a pass fires (a source
// continuing a burst "now") waits for the next pass, so the loop reads its
// inbox in between; a stopped queue fires nothing and ignores arming.
func TestTimerQueue(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name  string
		armed []armedTimer // at and name; armed in this order
		now   time.Duration
		fires []string
		next  time.Duration // until the earliest left, when any
	}{
		{"none due", []armedTimer{{at: 5 * ms, name: "a"}}, 4 * ms, nil, ms},
		{"time order", []armedTimer{{at: 3 * ms, name: "late"}, {at: ms, name: "early"}, {at: 9 * ms, name: "future"}}, 3 * ms, []string{"early", "late"}, 6 * ms},
		{"same instant: arming order", []armedTimer{{at: 2 * ms, name: "first"}, {at: 2 * ms, name: "second"}, {at: 2 * ms, name: "third"}}, 2 * ms, []string{"first", "second", "third"}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q timerQueue
			for _, p := range tc.armed {
				q.arm(p.at, p.name)
			}
			mark := q.mark()
			var fired []string
			for {
				name, ok := q.due(tc.now, mark)
				if !ok {
					break
				}
				fired = append(fired, name)
			}
			assert.Equal(t, tc.fires, fired)
			d, ok := q.next(tc.now)
			if tc.next < 0 {
				assert.False(t, ok, "nothing left")
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.next, d)
		})
	}

	var q timerQueue
	q.arm(0, "gen")
	mark := q.mark()
	name, ok := q.due(ms, mark)
	require.True(t, ok)
	assert.Equal(t, "gen", name)
	q.arm(ms, "gen") // armed by the handler for "now"
	_, ok = q.due(ms, mark)
	assert.False(t, ok, "a timer armed during the pass waits for the next one")
	d, ok := q.next(ms)
	require.True(t, ok)
	assert.LessOrEqual(t, d, time.Duration(0), "due already: the loop does not sleep")
	name, ok = q.due(ms, q.mark())
	require.True(t, ok)
	assert.Equal(t, "gen", name)

	q.arm(5*ms, "tick")
	q.stop()
	q.arm(6*ms, "late")
	_, ok = q.next(0)
	assert.False(t, ok, "stopped: nothing armed")
	_, ok = q.due(time.Hour, q.mark())
	assert.False(t, ok)
}

// TestTimerHeapOrder: the queue pops any arming sequence in due-time
// order, ties in arming order, as a stable sort would.
func TestTimerHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var q timerQueue
		var want []armedTimer
		for i := range rng.IntN(300) {
			p := armedTimer{at: time.Duration(rng.IntN(20)), name: fmt.Sprint(i)}
			q.arm(p.at, p.name)
			want = append(want, p)
		}
		slices.SortStableFunc(want, func(a, b armedTimer) int { return cmp.Compare(a.at, b.at) })
		for i, w := range want {
			name, ok := q.due(time.Hour, q.mark())
			require.True(t, ok, "round %d: timer %d", round, i)
			require.Equal(t, w.name, name, "round %d: timer %d", round, i)
		}
		_, ok := q.next(0)
		assert.False(t, ok)
	}
}
