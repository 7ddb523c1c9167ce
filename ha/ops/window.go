package ops

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

type aggKind uint8

const (
	aggCount aggKind = iota
	aggSum
	aggAvg
	aggMin
	aggMax
)

// maxWindowsPerTuple bounds size/slide of a sliding window.
const maxWindowsPerTuple = 1000

// winCell is the aggregate of one key in one window. v is the sum (sum,
// avg), the minimum (min) or the maximum (max); count uses n only.
type winCell struct {
	n     int64
	v     float64
	lin   ha.Lineage
	dirty bool // changed since the last Snapshot/SnapshotDelta
}

// windowOp implements tumbling (slide == size) and sliding windows.
type windowOp struct {
	name        string
	size, slide int64
	agg         aggKind

	hasWM bool
	wm    int64 // max event time seen; every open window ends after it
	late  int

	cells map[winKey]winCell
	open  openList

	tracking bool     // dirty tracking on (after the first Snapshot/Restore)
	dirty    []winKey // cells marked dirty, possibly closed since
}

func buildWindow(p *params, sliding bool) (ha.Operator, error) {
	size, err := p.duration("size")
	if err != nil {
		return nil, err
	}
	slide := size
	if sliding {
		if slide, err = p.duration("slide"); err != nil {
			return nil, err
		}
		if size%slide != 0 {
			return nil, p.errf("size", "must be a multiple of slide (%s), got %q", slide, size.String())
		}
		if size/slide > maxWindowsPerTuple {
			return nil, p.errf("slide", "size/slide must be at most %d windows per tuple, got %d", maxWindowsPerTuple, size/slide)
		}
	}
	agg, err := p.enum("agg", "sum", aggNames)
	if err != nil {
		return nil, err
	}
	return newWindow(p.op, size, slide, aggKind(slices.Index(aggNames, agg))), nil
}

func newWindow(name string, size, slide time.Duration, agg aggKind) *windowOp {
	return &windowOp{name: name, size: int64(size), slide: int64(slide), agg: agg, cells: make(map[winKey]winCell)}
}

func (w *windowOp) Name() string    { return w.name }
func (w *windowOp) Class() ha.Class { return ha.ConvergentCapable }

// Late is the number of tuples dropped because all their windows had closed.
func (w *windowOp) Late() int { return w.late }

// StateEntries is the number of open (window, key) cells.
func (w *windowOp) StateEntries() int { return len(w.cells) }

// Oldest is the start of the oldest open window.
func (w *windowOp) Oldest() (int64, bool) { return w.open.oldest() }

// Process advances the watermark to t.Time (closing every window that ends
// at or before it, oldest first, keys ascending) and then adds t to each of
// its windows that is still open; t is late when none is.
func (w *windowOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		// The end of the stream closes every window, at the end of the stream.
		w.hasWM, w.wm = true, endOfTime
		w.closeUpTo(emit, t.Emit)
		emit(t)
		return
	}
	if !w.hasWM || t.Time > w.wm {
		w.hasWM = true
		w.wm = t.Time
		w.closeUpTo(emit, math.MaxInt64)
	}
	added := false
	for s := floorDiv(t.Time, w.slide) * w.slide; s > t.Time-w.size; s -= w.slide {
		if s+w.size <= w.wm {
			break // this and every earlier window is closed
		}
		w.add(winKey{start: s, key: t.Key}, &t)
		added = true
	}
	if !added {
		w.late++
	}
}

func (w *windowOp) add(k winKey, t *ha.Tuple) {
	c, ok := w.cells[k]
	if !ok {
		w.open.addKey(k.start, k.key)
		c.v = t.Value
		if w.agg == aggSum || w.agg == aggAvg {
			c.v = 0
		}
	}
	c.n++
	switch w.agg {
	case aggSum, aggAvg:
		c.v += t.Value
	case aggMin:
		c.v = min(c.v, t.Value)
	case aggMax:
		c.v = max(c.v, t.Value)
	}
	c.lin.Add(t.Lineage)
	if w.tracking && !c.dirty {
		c.dirty = true
		w.dirty = append(w.dirty, k)
	}
	w.cells[k] = c
}

func (w *windowOp) value(c *winCell) float64 {
	switch w.agg {
	case aggCount:
		return float64(c.n)
	case aggAvg:
		return c.v / float64(c.n)
	default:
		return c.v
	}
}

// closeUpTo closes (emitting when emit != nil) every window ending at or
// before the watermark; a result's Emit is its window's end, at most last.
func (w *windowOp) closeUpTo(emit ha.Emit, last int64) {
	for len(w.open.wins) > 0 && w.open.wins[0].start+w.size <= w.wm {
		win := &w.open.wins[0]
		end := win.start + w.size
		if emit != nil {
			slices.Sort(win.keys)
		}
		for _, key := range win.keys {
			k := winKey{start: win.start, key: key}
			if emit != nil {
				c := w.cells[k]
				emit(ha.Tuple{
					Key:     key,
					ID:      ha.OutputID{Kind: ha.IDWindow, Key: key, X: win.start},
					Time:    end,
					Emit:    min(end, last),
					Value:   w.value(&c),
					Lineage: c.lin,
				})
			}
			delete(w.cells, k)
		}
		w.open.dropFirst()
	}
}

// sortedCells returns every open cell key ordered by (start, key).
func (w *windowOp) sortedCells() []winKey {
	ks := make([]winKey, 0, len(w.cells))
	for i := range w.open.wins {
		win := &w.open.wins[i]
		slices.Sort(win.keys)
		for _, key := range win.keys {
			ks = append(ks, winKey{start: win.start, key: key})
		}
	}
	return ks
}

func (w *windowOp) encode(tag uint64, ks []winKey) ([]byte, error) {
	e := newEncoder(tag)
	e.int(w.size)
	e.int(w.slide)
	e.uint(uint64(w.agg))
	e.bool(w.hasWM)
	e.int(w.wm)
	e.int(int64(w.late))
	e.arrayLen(len(ks))
	for _, k := range ks {
		c := w.cells[k]
		e.int(k.start)
		e.uint(uint64(k.key))
		e.int(c.n)
		e.float(c.v)
		e.lineage(c.lin.N, c.lin.Hash)
	}
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: encode state: %w", w.name, err)
	}
	return b, nil
}

// clearDirty starts a new checkpoint epoch: nothing is dirty.
func (w *windowOp) clearDirty() {
	for _, k := range w.dirty {
		if c, ok := w.cells[k]; ok && c.dirty {
			c.dirty = false
			w.cells[k] = c
		}
	}
	w.dirty = w.dirty[:0]
	w.tracking = true
}

// Snapshot encodes the configuration, watermark, late count and every open
// cell in (start, key) order.
func (w *windowOp) Snapshot() ([]byte, error) {
	b, err := w.state()
	w.clearDirty()
	return b, err
}

// state encodes the full state without starting a new checkpoint epoch.
func (w *windowOp) state() ([]byte, error) { return w.encode(tagWindowSnap, w.sortedCells()) }

// SnapshotDelta encodes the watermark, late count and the cells changed since
// the previous Snapshot or SnapshotDelta; cells closed since are implied by
// the watermark. Before any Snapshot or Restore it holds every cell.
func (w *windowOp) SnapshotDelta() ([]byte, error) {
	var ks []winKey
	if !w.tracking {
		ks = w.sortedCells()
	} else {
		ks = liveDirty(w.cells, w.dirty)
	}
	b, err := w.encode(tagWindowDelta, ks)
	w.clearDirty()
	return b, err
}

func cmpWinKey(a, b winKey) int {
	if a.start != b.start {
		if a.start < b.start {
			return -1
		}
		return 1
	}
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	return 0
}

type cellRec struct {
	k winKey
	c winCell
}

// decoded is a snapshot or delta after validation.
type windowState struct {
	hasWM bool
	wm    int64
	late  int
	cells []cellRec
}

func (w *windowOp) decode(b []byte, tag uint64) (*windowState, error) {
	d := newDecoder(b, tag)
	size, slide, agg := d.int(), d.int(), d.uint()
	if d.err == nil && (size != w.size || slide != w.slide || agg != uint64(w.agg)) {
		d.fail("state is for size=%s slide=%s agg=%d, operator has size=%s slide=%s agg=%s",
			time.Duration(size), time.Duration(slide), agg, time.Duration(w.size), time.Duration(w.slide), aggNames[w.agg])
	}
	st := &windowState{hasWM: d.bool(), wm: d.int()}
	late := d.int()
	if d.err == nil && (late < 0 || late > math.MaxInt32) {
		d.fail("late count %d", late)
	}
	st.late = int(late)
	n := d.arrayLen(6)
	st.cells = make([]cellRec, 0, n)
	seen := make(map[winKey]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		var r cellRec
		r.k.start = d.int()
		r.k.key = d.uint32()
		r.c.n = d.int()
		r.c.v = d.float()
		r.c.lin.N = d.uint32()
		r.c.lin.Hash = d.uint()
		if d.err != nil {
			break
		}
		switch {
		case r.k.start%w.slide != 0:
			d.fail("window start %d not a multiple of slide %d", r.k.start, w.slide)
		case r.k.start > math.MaxInt64-w.size || r.k.start < math.MinInt64/2:
			d.fail("window start %d out of range", r.k.start)
		case st.hasWM && r.k.start+w.size <= st.wm:
			d.fail("window %d..%d already closed by watermark %d", r.k.start, r.k.start+w.size, st.wm)
		case r.c.n <= 0:
			d.fail("cell with %d tuples", r.c.n)
		}
		if _, dup := seen[r.k]; dup {
			d.fail("duplicate cell %v", r.k)
		}
		seen[r.k] = struct{}{}
		st.cells = append(st.cells, r)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return st, nil
}

func (w *windowOp) upsert(cells []cellRec) {
	for _, r := range cells {
		if _, ok := w.cells[r.k]; !ok {
			w.open.addKey(r.k.start, r.k.key)
		}
		w.cells[r.k] = r.c
	}
}

// Restore replaces the state with a Snapshot; nil or empty means empty state.
// On error the state is unchanged.
func (w *windowOp) Restore(snap []byte) error {
	st := &windowState{}
	if len(snap) > 0 {
		var err error
		if st, err = w.decode(snap, tagWindowSnap); err != nil {
			return fmt.Errorf("%s: restore: %w", w.name, err)
		}
	}
	w.open.reset()
	clear(w.cells)
	w.hasWM, w.wm, w.late = st.hasWM, st.wm, st.late
	w.upsert(st.cells)
	w.dirty = w.dirty[:0]
	w.tracking = true
	return nil
}

// ApplyDelta applies a SnapshotDelta on top of the current state: it advances
// the watermark (dropping the windows it closes, without emitting) and
// replaces the changed cells. On error the state is unchanged.
func (w *windowOp) ApplyDelta(delta []byte) error {
	st, err := w.decode(delta, tagWindowDelta)
	if err != nil {
		return fmt.Errorf("%s: apply delta: %w", w.name, err)
	}
	w.hasWM, w.wm, w.late = st.hasWM, st.wm, st.late
	if w.hasWM {
		w.closeUpTo(nil, math.MaxInt64)
	}
	w.upsert(st.cells)
	w.clearDirty()
	return nil
}

// liveDirty returns the changed cells that still exist, in (start, key)
// order: what an incremental checkpoint of a keyed window state holds.
func liveDirty[V any](cells map[winKey]V, dirty []winKey) []winKey {
	ks := make([]winKey, 0, len(dirty))
	for _, k := range dirty {
		if _, ok := cells[k]; ok {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, cmpWinKey)
	return ks
}
