package ops

import (
	"fmt"
	"slices"
	"testing"

	"github.com/streamha/streamha/ha"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// winResult is one expected window output: the values and source numbers
// (on source stream 0) it reflects.
type winResult struct {
	key   uint32
	start int64
	vals  []float64
	nums  []int64
}

func aggOf(agg string, vals []float64) float64 {
	switch agg {
	case "count":
		return float64(len(vals))
	case "sum", "avg":
		s := 0.0
		for _, v := range vals {
			s += v
		}
		if agg == "avg" {
			return s / float64(len(vals))
		}
		return s
	case "min":
		return slices.Min(vals)
	default:
		return slices.Max(vals)
	}
}

func (r winResult) tuple(agg string, size int64) ha.Tuple {
	var l ha.Lineage
	for _, n := range r.nums {
		l.Add(ha.SourceLineage(0, n))
	}
	return ha.Tuple{
		Key:     r.key,
		ID:      ha.OutputID{Kind: ha.IDWindow, Key: r.key, X: r.start},
		Time:    r.start + size,
		Emit:    r.start + size,
		Value:   aggOf(agg, r.vals),
		Lineage: l,
	}
}

func TestWindows(t *testing.T) {
	ms := sec / 1000
	tumblingIn := []ha.Tuple{
		src(0, 2, 100*ms, 3, 0, 1),
		src(0, 1, 500*ms, 5, 0, 2),
		src(0, 2, 900*ms, 1, 0, 3),
		src(0, 1, 1200*ms, 7, 0, 4),  // closes [0,1s): k01 then k02
		src(1, 1, 800*ms, 100, 0, 5), // late: [0,1s) closed
		src(0, 3, 2000*ms, 2, 0, 6),  // closes [1s,2s) (end == time)
		src(1, 3, 3500*ms, 4, 0, 7),  // closes [2s,3s)
	}
	slidingIn := []ha.Tuple{
		src(0, 1, 500*ms, 1, 0, 1),   // windows -1s, 0
		src(0, 1, 1500*ms, 2, 0, 2),  // closes -1s; windows 0, 1s
		src(0, 2, 2200*ms, 4, 0, 3),  // closes 0; windows 1s, 2s
		src(0, 1, 3000*ms, 8, 0, 4),  // closes 1s (k01, k02); windows 2s, 3s
		src(0, 1, 900*ms, 50, 0, 5),  // late: -1s and 0 closed
		src(1, 1, 2500*ms, 16, 0, 6), // only window 2s still open
		src(0, 9, 10*sec, 0, 0, 7),   // closes 2s (k01, k02) and 3s
	}
	tests := []struct {
		op     string
		params map[string]any
		size   int64
		in     []ha.Tuple
		want   []winResult
		late   int
		oldest int64
	}{
		{"tumbling", map[string]any{"size": "1s"}, sec, tumblingIn, []winResult{
			{1, 0, []float64{5}, []int64{2}},
			{2, 0, []float64{3, 1}, []int64{1, 3}},
			{1, sec, []float64{7}, []int64{4}},
			{3, 2 * sec, []float64{2}, []int64{6}},
		}, 1, 3 * sec},
		{"sliding", map[string]any{"size": "2s", "slide": "1s"}, 2 * sec, slidingIn, []winResult{
			{1, -sec, []float64{1}, []int64{1}},
			{1, 0, []float64{1, 2}, []int64{1, 2}},
			{1, sec, []float64{2}, []int64{2}},
			{2, sec, []float64{4}, []int64{3}},
			{1, 2 * sec, []float64{8, 16}, []int64{4, 6}},
			{2, 2 * sec, []float64{4}, []int64{3}},
			{1, 3 * sec, []float64{8}, []int64{4}},
		}, 1, 9 * sec},
	}
	for _, tt := range tests {
		for _, agg := range aggNames {
			t.Run(tt.op+"/"+agg, func(t *testing.T) {
				p := map[string]any{"agg": agg}
				for k, v := range tt.params {
					p[k] = v
				}
				op := mustNew(t, tt.op, p)
				out := feed(op, tt.in)
				var want []ha.Tuple
				for _, r := range tt.want {
					want = append(want, r.tuple(agg, tt.size))
				}
				assert.Equal(t, want, out)
				assert.Equal(t, tt.late, op.(LateCounter).Late())
				oldest, ok := op.(ha.Horizon).Oldest()
				assert.True(t, ok)
				assert.Equal(t, tt.oldest, oldest)
			})
		}
	}
}

func TestWindowKeysAscendingAndLineageSum(t *testing.T) {
	op := mustNew(t, "tumbling", map[string]any{"size": "1s", "agg": "count"})
	var in []ha.Tuple
	for i := range 50 {
		in = append(in, src(0, uint32(49-i%50), int64(i), 1, 3, int64(i)))
		in = append(in, src(0, uint32(49-i%50), int64(i)+1, 1, 3, int64(100+i)))
	}
	in = append(in, src(0, 0, sec, 1, 3, 999))
	out := feed(op, in)
	require.Len(t, out, 50)
	for i, o := range out {
		assert.Equal(t, uint32(i), o.Key)
		assert.Equal(t, 2.0, o.Value)
		assert.Equal(t, lin(ha.SourceLineage(3, int64(49-i)), ha.SourceLineage(3, int64(149-i))), o.Lineage)
		assert.Equal(t, uint32(2), o.Lineage.N)
	}
	assert.Equal(t, 1, op.(ha.Sizer).StateEntries())
}

func TestHorizon(t *testing.T) {
	tests := []struct {
		op     string
		params map[string]any
		in     []ha.Tuple
		oldest int64
		ok     bool
	}{
		{"tumbling", map[string]any{"size": "1s"}, nil, 0, false},
		{"tumbling", map[string]any{"size": "1s"}, []ha.Tuple{src(0, 1, 2500*sec/1000, 1, 0, 1)}, 2 * sec, true},
		{"sliding", map[string]any{"size": "3s", "slide": "1s"}, []ha.Tuple{src(0, 1, 5500*sec/1000, 1, 0, 1)}, 3 * sec, true},
		{"sliding", map[string]any{"size": "3s", "slide": "1s"}, []ha.Tuple{src(0, 1, 5500*sec/1000, 1, 0, 1), src(0, 1, 7*sec, 1, 0, 2)}, 5 * sec, true},
		{"running_sum", nil, nil, 0, false},
		{"running_sum", nil, []ha.Tuple{src(0, 1, 9*sec, 1, 0, 1)}, 0, true},
		{"join", map[string]any{"window": "2s"}, nil, 0, false},
		{"join", map[string]any{"window": "2s"}, []ha.Tuple{src(0, 1, 3*sec, 1, 0, 1), src(1, 1, 5*sec, 1, 1, 1)}, 2 * sec, true},
		// the right side at 5s moves the watermark to 5s once the left reaches it: [2s,4s) closes
		{"join", map[string]any{"window": "2s"}, []ha.Tuple{src(0, 1, 3*sec, 1, 0, 1), src(1, 1, 5*sec, 1, 1, 1), src(0, 2, 6*sec, 1, 0, 2)}, 4 * sec, true},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(tt.op, i), func(t *testing.T) {
			op := mustNew(t, tt.op, tt.params)
			feed(op, tt.in)
			oldest, ok := op.(ha.Horizon).Oldest()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.oldest, oldest)
		})
	}
}

func TestRunningSum(t *testing.T) {
	op := mustNew(t, "running_sum", nil)
	in := []ha.Tuple{src(0, 2, 10, 1.5, 0, 1), src(0, 1, 20, 2, 0, 2), src(1, 2, 30, 4, 1, 1)}
	in[2].Emit = 35
	out := feed(op, in)
	want := []ha.Tuple{
		{Key: 2, Time: 10, Emit: 10, Value: 1.5, ID: ha.OutputID{Kind: ha.IDKey, Key: 2, X: 1}, Lineage: ha.SourceLineage(0, 1)},
		{Key: 1, Time: 20, Emit: 20, Value: 2, ID: ha.OutputID{Kind: ha.IDKey, Key: 1, X: 1}, Lineage: ha.SourceLineage(0, 2)},
		{Key: 2, Time: 30, Emit: 35, Value: 5.5, ID: ha.OutputID{Kind: ha.IDKey, Key: 2, X: 2}, Lineage: lin(ha.SourceLineage(0, 1), ha.SourceLineage(1, 1))},
	}
	assert.Equal(t, want, out)
	assert.Equal(t, 2, op.(ha.Sizer).StateEntries())
}

// TestTumblingRestartIsGapThenConvergent: restarted with empty state in the
// middle of a window, the operator emits that window with fewer source
// tuples (a gap) and every later window identically (convergence).
func TestTumblingRestartIsGapThenConvergent(t *testing.T) {
	in := workload(7, 2000, 5)
	params := map[string]any{"size": "1s", "agg": "sum"}
	want := feed(mustNew(t, "tumbling", params), in)

	cut := 1000
	restarted := mustNew(t, "tumbling", params)
	got := feed(restarted, in[cut:]) // amnesia: empty state, no replay

	byID := map[ha.OutputID]ha.Tuple{}
	for _, o := range want {
		byID[o.ID] = o
	}
	cutTime := in[cut].Time
	gaps, same := 0, 0
	for _, o := range got {
		orig, ok := byID[o.ID]
		require.True(t, ok, "%s is an output of the uninterrupted run", o.ID)
		if o == orig {
			same++
			continue
		}
		gaps++
		assert.Less(t, o.Lineage.N, orig.Lineage.N, "%s reflects fewer source tuples", o.ID)
		assert.Less(t, o.ID.X, cutTime, "only windows open at the restart differ")
	}
	assert.Positive(t, gaps)
	assert.Positive(t, same)
	// Convergent: from some point on, the output is identical.
	tail := got[len(got)-len(got)/2:]
	assert.Equal(t, want[len(want)-len(tail):], tail)
}
