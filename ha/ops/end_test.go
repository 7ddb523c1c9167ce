package ops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// end is the end-of-stream mark of stream s at t, arriving on port.
func end(port uint8, s uint32, t int64) ha.Tuple {
	m := ha.EndMark(s, time.Duration(t))
	m.Stream = port
	return m
}

// TestEndOfStreamClosesEveryWindow: every operator passes the end of the
// stream on, and the windowed ones first emit every open window, with the
// end of the stream as the emission time of a window it cut short.
func TestEndOfStreamClosesEveryWindow(t *testing.T) {
	tests := []struct {
		name string
		op   string
		p    map[string]any
		in   []ha.Tuple
		// want is the ids (String) and emission times of the output, in order.
		want []string
		emit []int64
	}{
		{
			name: "filter passes the mark whatever its value",
			op:   "filter", p: map[string]any{"value_gt": 0.5},
			in:   []ha.Tuple{src(0, 1, 1*sec, 0.1, 0, 1), end(0, 0, 2*sec)},
			want: []string{"end-of-stream s0"}, emit: []int64{2 * sec},
		},
		{
			name: "map leaves the mark unchanged",
			op:   "map", p: map[string]any{"scale": 3.0},
			in:   []ha.Tuple{end(0, 0, 2*sec)},
			want: []string{"end-of-stream s0"}, emit: []int64{2 * sec},
		},
		{
			name: "tumbling: the open windows close, the cut-short one at the end of the stream",
			op:   "tumbling", p: map[string]any{"size": "1s"},
			in:   []ha.Tuple{src(0, 1, sec/2, 1, 0, 1), src(0, 2, sec+sec/2, 1, 0, 2), end(0, 0, sec+sec*3/4)},
			want: []string{"k01|w=0s", "k02|w=1s", "end-of-stream s0"}, emit: []int64{sec, sec + sec*3/4, sec + sec*3/4},
		},
		{
			name: "running sum passes the mark",
			op:   "running_sum",
			in:   []ha.Tuple{src(0, 1, 1, 1, 0, 1), end(0, 0, 2*sec)},
			want: []string{"k01#1", "end-of-stream s0"}, emit: []int64{1, 2 * sec},
		},
		{
			name: "hash chain passes the mark",
			op:   "hash_chain",
			in:   []ha.Tuple{src(0, 1, 1, 1, 0, 1), end(0, 0, 2*sec)},
			want: []string{"k01#1", "end-of-stream s0"}, emit: []int64{1, 2 * sec},
		},
		{
			name: "join waits for both ports, then closes its windows",
			op:   "join", p: map[string]any{"window": "1s"},
			in: []ha.Tuple{src(0, 1, sec/4, 1, 0, 1), src(1, 1, sec/2, 2, 1, 1), end(0, 0, sec*3/4),
				src(1, 1, sec*3/5, 2, 1, 2), end(1, 1, sec*3/4)},
			want: []string{"k01|s0:1*s1:1", "k01|s0:1*s1:2", "end-of-stream s1"}, emit: []int64{sec * 3 / 4, sec * 3 / 4, sec * 3 / 4},
		},
		{
			name: "union passes one mark, once both ports ended",
			op:   "union",
			in:   []ha.Tuple{end(0, 0, 2*sec), src(1, 1, 2*sec-1, 1, 1, 9), end(1, 1, 2*sec)},
			want: []string{"s1:9", "end-of-stream s1"}, emit: []int64{2*sec - 1, 2 * sec},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := feed(mustNew(t, tc.op, tc.p), tc.in)
			var ids []string
			var emits []int64
			for _, o := range out {
				ids = append(ids, o.ID.String())
				emits = append(emits, o.Emit)
			}
			assert.Equal(t, tc.want, ids)
			assert.Equal(t, tc.emit, emits)
		})
	}
}

// TestUnionEndedPortsSurviveRestore: which ports have ended is state, so
// a restored union still waits for the other port only.
func TestUnionEndedPortsSurviveRestore(t *testing.T) {
	u := mustNew(t, "union", nil)
	snap, err := u.Snapshot()
	require.NoError(t, err)
	assert.Empty(t, snap, "no port ended: empty state")
	feed(u, []ha.Tuple{end(0, 0, sec)})
	snap, err = u.Snapshot()
	require.NoError(t, err)
	r := mustNew(t, "union", nil)
	require.NoError(t, r.Restore(snap))
	out := feed(r, []ha.Tuple{end(1, 1, sec)})
	require.Len(t, out, 1)
	assert.True(t, out[0].IsEnd())
	require.Error(t, r.Restore([]byte{1, 2, 3}), "garbage is no union state")
}
