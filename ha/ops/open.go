package ops

import "sort"

// winKey identifies one (window, key) cell of a windowed operator.
type winKey struct {
	start int64
	key   uint32
}

// openWin is one open window: its start and the keys that have a cell in it
// (in insertion order; sorted when the window closes or is snapshotted).
type openWin struct {
	start int64
	keys  []uint32
}

// openList is the set of open windows ordered by start, with a free list of
// key slices so that steady-state processing does not allocate.
type openList struct {
	wins  []openWin
	spare [][]uint32
}

// addKey records that key got a new cell in the window starting at start.
func (o *openList) addKey(start int64, key uint32) {
	n := len(o.wins)
	// Fast path: event time mostly advances, so the window is usually the last.
	if n > 0 && o.wins[n-1].start == start {
		o.wins[n-1].keys = append(o.wins[n-1].keys, key)
		return
	}
	i := sort.Search(n, func(i int) bool { return o.wins[i].start >= start })
	if i < n && o.wins[i].start == start {
		o.wins[i].keys = append(o.wins[i].keys, key)
		return
	}
	var keys []uint32
	if m := len(o.spare); m > 0 {
		keys = o.spare[m-1][:0]
		o.spare = o.spare[:m-1]
	}
	o.wins = append(o.wins, openWin{})
	copy(o.wins[i+1:], o.wins[i:])
	o.wins[i] = openWin{start: start, keys: append(keys, key)}
}

// oldest returns the start of the oldest open window.
func (o *openList) oldest() (int64, bool) {
	if len(o.wins) == 0 {
		return 0, false
	}
	return o.wins[0].start, true
}

// dropFirst removes the oldest window and recycles its key slice.
func (o *openList) dropFirst() {
	o.spare = append(o.spare, o.wins[0].keys[:0])
	copy(o.wins, o.wins[1:])
	o.wins[len(o.wins)-1] = openWin{}
	o.wins = o.wins[:len(o.wins)-1]
}

func (o *openList) reset() {
	for len(o.wins) > 0 {
		o.dropFirst()
	}
}
