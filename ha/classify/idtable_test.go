package classify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIDTableNumbersLikeAMap: the id table gives every id the number a
// map would, across growth from a too-small size and for ids that repeat,
// whatever the id type.
func TestIDTableNumbersLikeAMap(t *testing.T) {
	type pair struct {
		K uint8
		X int64
	}
	for _, tc := range []struct {
		name   string
		sizeAs int // the size hint
		n      int
		span   int64 // ids drawn from [0, span): repeats when span < n
	}{
		{"presized, distinct", 5000, 5000, 1 << 40},
		{"grows from 0", 0, 5000, 1 << 40},
		{"many repeats", 100, 20000, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var byNum []pair
			tab := newIDTable(tc.sizeAs, func(d int32) pair { return byNum[d] })
			want := map[pair]int32{}
			for range tc.n {
				id := pair{uint8(r.IntN(3)), r.Int64N(tc.span)}
				d, found := tab.get(id, int32(len(byNum)))
				w, ok := want[id]
				require.Equal(t, ok, found, "%v", id)
				if !ok {
					w = int32(len(want))
					want[id] = w
					byNum = append(byNum, id)
				}
				require.Equal(t, w, d, "%v", id)
			}
			assert.Equal(t, len(want), tab.n)
			assert.LessOrEqual(t, tab.n*4, len(tab.slots)*3, "at most 3/4 full")
		})
	}
	// Strings work the same way.
	var names []string
	tab := newIDTable(0, func(d int32) string { return names[d] })
	for i := range 3000 {
		id := fmt.Sprintf("k%02d|w=%ds", i%17, i%101)
		d, found := tab.get(id, int32(len(names)))
		if !found {
			names = append(names, id)
		}
		require.Equal(t, id, names[d])
	}
	assert.Len(t, names, 17*101)
}
