package ops

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// joinEntry is one buffered input: its source number (ID.X), value and lineage.
type joinEntry struct {
	x   int64
	v   float64
	lin ha.Lineage
}

// joinCell buffers both sides of one key in one window.
type joinCell struct {
	side  [2][]joinEntry // 0 = left (port 0), 1 = right (port 1)
	dirty bool
}

// joinOp is a windowed equi-join of port 0 and port 1 on Key.
type joinOp struct {
	window int64

	seen [2]bool  // a tuple arrived on the port
	maxT [2]int64 // max event time seen per port
	late int

	cells    map[winKey]*joinCell
	buffered int // tuples held in cells
	open     openList
	free     []*joinCell

	tracking bool
	dirty    []winKey
}

func buildJoin(p *params) (ha.Operator, error) {
	w, err := p.duration("window")
	if err != nil {
		return nil, err
	}
	return newJoin(w), nil
}

func newJoin(window time.Duration) *joinOp {
	return &joinOp{window: int64(window), cells: make(map[winKey]*joinCell)}
}

func (*joinOp) Name() string    { return "join" }
func (*joinOp) Class() ha.Class { return ha.Repeatable }

// Late is the number of tuples dropped because their window had closed.
func (j *joinOp) Late() int { return j.late }

// StateEntries is the number of buffered tuples.
func (j *joinOp) StateEntries() int { return j.buffered }

// Oldest is the start of the oldest open window.
func (j *joinOp) Oldest() (int64, bool) { return j.open.oldest() }

// watermark is the min over both ports of their max event time; ok is false
// while a port has never been seen (its watermark is minus infinity).
func (j *joinOp) watermark() (int64, bool) {
	if !j.seen[0] || !j.seen[1] {
		return 0, false
	}
	return min(j.maxT[0], j.maxT[1]), true
}

// Process advances the port's event time, closes every window whose end the
// watermark has reached (emitting its pairs) and buffers t in its window
// unless that window has closed (late). Port 0 is the left side; any other
// port is the right side.
func (j *joinOp) Process(t ha.Tuple, emit ha.Emit) {
	p := 0
	if t.Stream != 0 {
		p = 1
	}
	if t.IsEnd() {
		// The port has ended; once both have, every window closes at the
		// end of the stream and the mark goes on.
		j.seen[p], j.maxT[p] = true, endOfTime
		j.closeUpTo(emit, t.Emit)
		if j.maxT[1-p] == endOfTime {
			t.Stream = 0
			emit(t)
		}
		return
	}
	if !j.seen[p] || t.Time > j.maxT[p] {
		j.seen[p] = true
		j.maxT[p] = t.Time
		j.closeUpTo(emit, math.MaxInt64)
	}
	start := floorDiv(t.Time, j.window) * j.window
	if wm, ok := j.watermark(); ok && start+j.window <= wm {
		j.late++
		return
	}
	k := winKey{start: start, key: t.Key}
	c, ok := j.cells[k]
	if !ok {
		c = j.newCell()
		j.cells[k] = c
		j.open.addKey(start, t.Key)
	}
	c.side[p] = append(c.side[p], joinEntry{x: t.ID.X, v: t.Value, lin: t.Lineage})
	j.buffered++
	if j.tracking && !c.dirty {
		c.dirty = true
		j.dirty = append(j.dirty, k)
	}
}

func (j *joinOp) newCell() *joinCell {
	if n := len(j.free); n > 0 {
		c := j.free[n-1]
		j.free = j.free[:n-1]
		return c
	}
	return &joinCell{}
}

func (j *joinOp) release(c *joinCell) {
	j.buffered -= len(c.side[0]) + len(c.side[1])
	c.side[0] = c.side[0][:0]
	c.side[1] = c.side[1][:0]
	c.dirty = false
	j.free = append(j.free, c)
}

func cmpEntry(a, b joinEntry) int { return cmp.Compare(a.x, b.x) }

// closeUpTo closes every window ending at or before the watermark, emitting
// (when emit != nil) per key ascending every (left, right) pair ordered by
// (left source number, right source number), with Emit the window's end,
// at most last.
func (j *joinOp) closeUpTo(emit ha.Emit, last int64) {
	wm, ok := j.watermark()
	if !ok {
		return
	}
	for len(j.open.wins) > 0 && j.open.wins[0].start+j.window <= wm {
		win := &j.open.wins[0]
		end := win.start + j.window
		if emit != nil {
			slices.Sort(win.keys)
		}
		for _, key := range win.keys {
			k := winKey{start: win.start, key: key}
			c := j.cells[k]
			if emit != nil && len(c.side[0]) > 0 && len(c.side[1]) > 0 {
				slices.SortStableFunc(c.side[0], cmpEntry)
				slices.SortStableFunc(c.side[1], cmpEntry)
				for _, l := range c.side[0] {
					for _, r := range c.side[1] {
						lin := l.lin
						lin.Add(r.lin)
						emit(ha.Tuple{
							Key:     key,
							ID:      ha.OutputID{Kind: ha.IDPair, Key: key, X: int64(uint64(l.x)<<32 | uint64(uint32(r.x)))},
							Time:    end,
							Emit:    min(end, last),
							Value:   l.v + r.v,
							Lineage: lin,
						})
					}
				}
			}
			delete(j.cells, k)
			j.release(c)
		}
		j.open.dropFirst()
	}
}

func (j *joinOp) sortedCells() []winKey {
	ks := make([]winKey, 0, len(j.cells))
	for i := range j.open.wins {
		win := &j.open.wins[i]
		slices.Sort(win.keys)
		for _, key := range win.keys {
			ks = append(ks, winKey{start: win.start, key: key})
		}
	}
	return ks
}

func (j *joinOp) encode(tag uint64, ks []winKey) ([]byte, error) {
	e := newEncoder(tag)
	e.int(j.window)
	for p := range 2 {
		e.bool(j.seen[p])
		e.int(j.maxT[p])
	}
	e.int(int64(j.late))
	e.arrayLen(len(ks))
	for _, k := range ks {
		c := j.cells[k]
		e.int(k.start)
		e.uint(uint64(k.key))
		for p := range 2 {
			e.arrayLen(len(c.side[p]))
			for _, en := range c.side[p] {
				e.int(en.x)
				e.float(en.v)
				e.lineage(en.lin.N, en.lin.Hash)
			}
		}
	}
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("join: encode state: %w", err)
	}
	return b, nil
}

func (j *joinOp) clearDirty() {
	for _, k := range j.dirty {
		if c, ok := j.cells[k]; ok {
			c.dirty = false
		}
	}
	j.dirty = j.dirty[:0]
	j.tracking = true
}

// Snapshot encodes the per-port event times, late count and every buffered
// tuple, cells in (window start, key) order and tuples in arrival order.
func (j *joinOp) Snapshot() ([]byte, error) {
	b, err := j.state()
	j.clearDirty()
	return b, err
}

// state encodes the full state without starting a new checkpoint epoch.
func (j *joinOp) state() ([]byte, error) { return j.encode(tagJoinSnap, j.sortedCells()) }

// SnapshotDelta encodes the per-port event times, late count and the cells
// that received tuples since the previous Snapshot or SnapshotDelta (whole
// cells; closed ones are implied by the watermark).
func (j *joinOp) SnapshotDelta() ([]byte, error) {
	var ks []winKey
	if !j.tracking {
		ks = j.sortedCells()
	} else {
		ks = liveDirty(j.cells, j.dirty)
	}
	b, err := j.encode(tagJoinDelta, ks)
	j.clearDirty()
	return b, err
}

type joinState struct {
	seen  [2]bool
	maxT  [2]int64
	late  int
	keys  []winKey
	cells []*joinCell
}

func (j *joinOp) decode(b []byte, tag uint64) (*joinState, error) {
	d := newDecoder(b, tag)
	if w := d.int(); d.err == nil && w != j.window {
		d.fail("state is for window=%s, operator has window=%s", time.Duration(w), time.Duration(j.window))
	}
	st := &joinState{}
	for p := range 2 {
		st.seen[p] = d.bool()
		st.maxT[p] = d.int()
	}
	late := d.int()
	if d.err == nil && (late < 0 || late > math.MaxInt32) {
		d.fail("late count %d", late)
	}
	st.late = int(late)
	wm, hasWM := min(st.maxT[0], st.maxT[1]), st.seen[0] && st.seen[1]
	n := d.arrayLen(4)
	seen := make(map[winKey]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := winKey{start: d.int(), key: d.uint32()}
		c := &joinCell{}
		for p := range 2 {
			m := d.arrayLen(4)
			c.side[p] = make([]joinEntry, 0, m)
			for range m {
				c.side[p] = append(c.side[p], joinEntry{x: d.int(), v: d.float(), lin: ha.Lineage{N: d.uint32(), Hash: d.uint()}})
			}
		}
		if d.err != nil {
			break
		}
		switch {
		case k.start%j.window != 0:
			d.fail("window start %d not a multiple of window %d", k.start, j.window)
		case k.start > math.MaxInt64-j.window || k.start < math.MinInt64/2:
			d.fail("window start %d out of range", k.start)
		case hasWM && k.start+j.window <= wm:
			d.fail("window %d..%d already closed by watermark %d", k.start, k.start+j.window, wm)
		case len(c.side[0])+len(c.side[1]) == 0:
			d.fail("empty cell %v", k)
		}
		if _, dup := seen[k]; dup {
			d.fail("duplicate cell %v", k)
		}
		seen[k] = struct{}{}
		st.keys = append(st.keys, k)
		st.cells = append(st.cells, c)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return st, nil
}

func (j *joinOp) install(st *joinState) {
	j.seen, j.maxT, j.late = st.seen, st.maxT, st.late
	for i, k := range st.keys {
		if old, ok := j.cells[k]; ok {
			j.release(old)
		} else {
			j.open.addKey(k.start, k.key)
		}
		j.cells[k] = st.cells[i]
		j.buffered += len(st.cells[i].side[0]) + len(st.cells[i].side[1])
	}
}

// Restore replaces the state with a Snapshot; nil or empty means empty state.
// On error the state is unchanged.
func (j *joinOp) Restore(snap []byte) error {
	st := &joinState{}
	if len(snap) > 0 {
		var err error
		if st, err = j.decode(snap, tagJoinSnap); err != nil {
			return fmt.Errorf("join: restore: %w", err)
		}
	}
	for _, win := range j.open.wins {
		for _, key := range win.keys {
			k := winKey{start: win.start, key: key}
			j.release(j.cells[k])
			delete(j.cells, k)
		}
	}
	j.open.reset()
	j.install(st)
	j.dirty = j.dirty[:0]
	j.tracking = true
	return nil
}

// ApplyDelta applies a SnapshotDelta on top of the current state: it advances
// the per-port event times (dropping the windows the watermark closes,
// without emitting) and replaces the changed cells. On error the state is
// unchanged.
func (j *joinOp) ApplyDelta(delta []byte) error {
	st, err := j.decode(delta, tagJoinDelta)
	if err != nil {
		return fmt.Errorf("join: apply delta: %w", err)
	}
	j.seen, j.maxT = st.seen, st.maxT
	j.closeUpTo(nil, math.MaxInt64)
	j.install(st)
	j.clearDirty()
	return nil
}
