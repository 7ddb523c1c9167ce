package ops

import (
	"fmt"
	"testing"

	"github.com/streamha/streamha/ha"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func caseName(i int) string {
	c := statefulCases[i]
	return fmt.Sprintf("%s/%v", c.name, c.params)
}

// TestSnapshotRestoreRoundTrip: the checkpointing strategy's round trip.
// An operator restored from a snapshot and fed the rest of the input emits
// exactly what the uninterrupted operator emits.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	in := workload(1, 3000, 7)
	for i, c := range statefulCases {
		t.Run(caseName(i), func(t *testing.T) {
			want := feed(mustNew(t, c.name, c.params), in)
			require.NotEmpty(t, want)
			for _, cut := range []int{0, 1, 17, 999, 1500, len(in)} {
				live := mustNew(t, c.name, c.params)
				before := feed(live, in[:cut])
				snap, err := live.Snapshot()
				require.NoError(t, err)

				restored := mustNew(t, c.name, c.params)
				require.NoError(t, restored.Restore(snap))
				again, err := restored.Snapshot()
				require.NoError(t, err)
				assert.Equal(t, snap, again, "cut %d: snapshot bytes are deterministic", cut)

				after := feed(restored, in[cut:])
				assert.Equal(t, want, append(before, after...), "cut %d", cut)
				assert.Equal(t, feed(live, in[cut:]), after, "cut %d", cut)
				assert.Equal(t, stateOf(t, live), stateOf(t, restored), "cut %d", cut)
				assert.Equal(t, live.(ha.Sizer).StateEntries(), restored.(ha.Sizer).StateEntries(), "cut %d", cut)
				assert.Equal(t, live.(lateReporter).lateOrZero(), restored.(lateReporter).lateOrZero())
			}
		})
	}
}

// lateReporter lets tests compare late counts of any stateful operator.
type lateReporter interface{ lateOrZero() int }

func (w *windowOp) lateOrZero() int   { return w.late }
func (j *joinOp) lateOrZero() int     { return j.late }
func (*runningSumOp) lateOrZero() int { return 0 }
func (*hashChainOp) lateOrZero() int  { return 0 }

// TestDeltaRoundTrip: Restore(snapshot) followed by ApplyDelta of every
// delta since equals the live state, and then behaves identically.
func TestDeltaRoundTrip(t *testing.T) {
	in := workload(2, 4000, 9)
	for i, c := range statefulCases {
		t.Run(caseName(i), func(t *testing.T) {
			for _, firstFull := range []bool{true, false} {
				live := mustNew(t, c.name, c.params)
				backup := mustNew(t, c.name, c.params).(ha.Incremental)
				var out []ha.Tuple
				out = append(out, feed(live, in[:300])...)
				if firstFull {
					snap, err := live.Snapshot()
					require.NoError(t, err)
					require.NoError(t, backup.(ha.Operator).Restore(snap))
				} else {
					// before any Snapshot, a delta carries everything
					require.NoError(t, backup.(ha.Operator).Restore(nil))
				}
				pos := 300
				for step := 0; pos < 3000; step++ {
					next := min(pos+1+step*37%400, 3000)
					out = append(out, feed(live, in[pos:next])...)
					pos = next
					d, err := live.(ha.Incremental).SnapshotDelta()
					require.NoError(t, err)
					require.NoError(t, backup.ApplyDelta(d))
					require.Equal(t, stateOf(t, live), stateOf(t, backup.(ha.Operator)), "after delta %d", step)
					require.Equal(t, live.(ha.Sizer).StateEntries(), backup.(ha.Sizer).StateEntries(), "after delta %d", step)
					if step == 5 { // an empty delta
						d, err := live.(ha.Incremental).SnapshotDelta()
						require.NoError(t, err)
						require.NoError(t, backup.ApplyDelta(d))
					}
				}
				rest := feed(backup.(ha.Operator), in[pos:])
				assert.Equal(t, feed(live, in[pos:]), rest)
				assert.Equal(t, feed(mustNew(t, c.name, c.params), in), append(out, rest...))
			}
		})
	}
}

// TestDeltaIsSmall: with 10,000 keys held and 10 touched, a delta is a small
// fraction of a full snapshot.
func TestDeltaIsSmall(t *testing.T) {
	const keys = 10000
	for i, c := range statefulCases {
		t.Run(caseName(i), func(t *testing.T) {
			op := mustNew(t, c.name, c.params)
			var n int64
			for k := range keys {
				n++
				op.Process(src(uint8(k%2), uint32(k), 100, float64(k), uint32(k%2), n), func(ha.Tuple) {})
			}
			assert.GreaterOrEqual(t, op.(ha.Sizer).StateEntries(), keys)
			snap, err := op.Snapshot()
			require.NoError(t, err)
			for k := range 10 {
				n++
				op.Process(src(uint8(k%2), uint32(k*997), 200, 1, uint32(k%2), n), func(ha.Tuple) {})
			}
			d, err := op.(ha.Incremental).SnapshotDelta()
			require.NoError(t, err)
			t.Logf("snapshot %d bytes, delta %d bytes", len(snap), len(d))
			assert.Less(t, len(d)*100, len(snap))

			backup := mustNew(t, c.name, c.params)
			require.NoError(t, backup.Restore(snap))
			require.NoError(t, backup.(ha.Incremental).ApplyDelta(d))
			assert.Equal(t, stateOf(t, op), stateOf(t, backup))
		})
	}
}

// TestSnapshotBytesIndependentOfArrivalOrder: the same state reached through
// a different key order encodes to the same bytes.
func TestSnapshotBytesIndependentOfArrivalOrder(t *testing.T) {
	for _, c := range []struct {
		name   string
		params map[string]any
	}{{"tumbling", map[string]any{"size": "1s", "agg": "max"}}, {"sliding", map[string]any{"size": "1s", "slide": "250ms"}}, {"running_sum", nil}, {"hash_chain", nil}} {
		a, b := mustNew(t, c.name, c.params), mustNew(t, c.name, c.params)
		for k := range 100 {
			a.Process(src(0, uint32(k), 10, float64(k), 0, int64(k)), func(ha.Tuple) {})
			b.Process(src(0, uint32(99-k), 10, float64(99-k), 0, int64(99-k)), func(ha.Tuple) {})
		}
		sa, err := a.Snapshot()
		require.NoError(t, err)
		sb, err := b.Snapshot()
		require.NoError(t, err)
		assert.Equal(t, sa, sb, c.name)
	}
}

func TestRestoreErrors(t *testing.T) {
	for i, c := range statefulCases {
		t.Run(caseName(i), func(t *testing.T) {
			op := mustNew(t, c.name, c.params)
			feed(op, workload(5, 500, 3))
			snap, err := op.Snapshot()
			require.NoError(t, err)
			delta, err := op.(ha.Incremental).SnapshotDelta()
			require.NoError(t, err)
			before := stateOf(t, op)

			// a snapshot of another stateful operator or configuration
			other := statefulCases[(i+1)%len(statefulCases)]
			otherOp := mustNew(t, other.name, other.params)
			feed(otherOp, workload(5, 50, 3))
			otherSnap, err := otherOp.Snapshot()
			require.NoError(t, err)

			garbage := map[string][]byte{
				"text":           []byte("not a snapshot"),
				"huge array":     {0x01, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff},
				"one byte":       {0xc1},
				"truncated":      snap[:len(snap)-1],
				"trailing byte":  append(append([]byte{}, snap...), 0),
				"delta":          delta,
				"other operator": otherSnap,
			}
			for what, b := range garbage {
				err := op.Restore(b)
				require.Error(t, err, what)
				assert.ErrorIs(t, err, ErrCorruptState, what)
				assert.Contains(t, err.Error(), c.name+": restore: ", what)
				assert.Equal(t, before, stateOf(t, op), "%s: a failed restore leaves the state alone", what)
			}
			err = op.(ha.Incremental).ApplyDelta(snap)
			assert.ErrorIs(t, err, ErrCorruptState, "a snapshot is not a delta")
			assert.Contains(t, err.Error(), c.name+": apply delta: ")
			assert.Equal(t, before, stateOf(t, op))

			for _, empty := range [][]byte{nil, {}} {
				require.NoError(t, op.Restore(empty))
				assert.Zero(t, op.(ha.Sizer).StateEntries())
				_, ok := op.(ha.Horizon).Oldest()
				assert.False(t, ok)
			}
		})
	}
}

func TestRestoreRejectsOtherConfig(t *testing.T) {
	a := mustNew(t, "tumbling", map[string]any{"size": "1s"})
	feed(a, workload(1, 10, 2))
	snap, err := a.Snapshot()
	require.NoError(t, err)
	for _, p := range []map[string]any{{"size": "2s"}, {"size": "1s", "agg": "max"}} {
		err := mustNew(t, "tumbling", p).Restore(snap)
		assert.ErrorIs(t, err, ErrCorruptState)
		assert.ErrorContains(t, err, "state is for size=1s")
	}
	b := mustNew(t, "join", map[string]any{"window": "1s"})
	feed(b, workload(1, 10, 2))
	snap, err = b.Snapshot()
	require.NoError(t, err)
	assert.ErrorContains(t, mustNew(t, "join", map[string]any{"window": "3s"}).Restore(snap), "state is for window=1s")
}

// FuzzRestore feeds arbitrary bytes to Restore and ApplyDelta of every
// stateful operator: they may fail, never panic, and a state they accept
// keeps working.
func FuzzRestore(f *testing.F) {
	for _, c := range statefulCases {
		op := mustNew(f, c.name, c.params)
		feed(op, workload(9, 200, 3))
		snap, err := op.Snapshot()
		require.NoError(f, err)
		f.Add(snap)
		feed(op, workload(10, 20, 3))
		d, err := op.(ha.Incremental).SnapshotDelta()
		require.NoError(f, err)
		f.Add(d)
	}
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		more := workload(11, 50, 3)
		for _, c := range statefulCases {
			op := mustNew(t, c.name, c.params)
			if op.Restore(b) == nil {
				feed(op, more)
				_, err := op.Snapshot()
				require.NoError(t, err)
			}
			op = mustNew(t, c.name, c.params)
			if op.(ha.Incremental).ApplyDelta(b) == nil {
				feed(op, more)
				_, err := op.(ha.Incremental).SnapshotDelta()
				require.NoError(t, err)
			}
		}
	})
}
