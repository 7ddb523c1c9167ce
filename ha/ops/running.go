package ops

import (
	"fmt"
	"slices"

	"github.com/streamha/streamha/ha"
)

// runCell is the running sum of one key.
type runCell struct {
	n     int64
	sum   float64
	lin   ha.Lineage
	dirty bool
}

// runningSumOp emits the per-key running sum for every input.
type runningSumOp struct {
	cells    map[uint32]runCell
	tracking bool
	dirty    []uint32
}

func newRunningSum() *runningSumOp { return &runningSumOp{cells: make(map[uint32]runCell)} }

func (*runningSumOp) Name() string    { return "running_sum" }
func (*runningSumOp) Class() ha.Class { return ha.Deterministic }

// StateEntries is the number of keys seen.
func (r *runningSumOp) StateEntries() int { return len(r.cells) }

// Oldest is (0, true) once any key is held: the state depends on all history.
func (r *runningSumOp) Oldest() (int64, bool) { return 0, len(r.cells) > 0 }

// Process adds t to its key's sum and emits the new sum with id key#n.
func (r *runningSumOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		emit(t)
		return
	}
	c := r.cells[t.Key]
	c.n++
	c.sum += t.Value
	c.lin.Add(t.Lineage)
	if r.tracking && !c.dirty {
		c.dirty = true
		r.dirty = append(r.dirty, t.Key)
	}
	r.cells[t.Key] = c
	emit(ha.Tuple{
		Key:     t.Key,
		Time:    t.Time,
		Emit:    t.Emit,
		Value:   c.sum,
		ID:      ha.OutputID{Kind: ha.IDKey, Key: t.Key, X: c.n},
		Lineage: c.lin,
	})
}

func (r *runningSumOp) encode(tag uint64, keys []uint32) ([]byte, error) {
	e := newEncoder(tag)
	e.arrayLen(len(keys))
	for _, k := range keys {
		c := r.cells[k]
		e.uint(uint64(k))
		e.int(c.n)
		e.float(c.sum)
		e.lineage(c.lin.N, c.lin.Hash)
	}
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("running_sum: encode state: %w", err)
	}
	return b, nil
}

func (r *runningSumOp) clearDirty() {
	for _, k := range r.dirty {
		c := r.cells[k]
		c.dirty = false
		r.cells[k] = c
	}
	r.dirty = r.dirty[:0]
	r.tracking = true
}

// Snapshot encodes every key's count, sum and lineage in key order.
func (r *runningSumOp) Snapshot() ([]byte, error) {
	b, err := r.state()
	r.clearDirty()
	return b, err
}

// state encodes the full state without starting a new checkpoint epoch.
func (r *runningSumOp) state() ([]byte, error) { return r.encode(tagRunningSnap, r.sortedKeys()) }

func (r *runningSumOp) sortedKeys() []uint32 {
	keys := make([]uint32, 0, len(r.cells))
	for k := range r.cells {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SnapshotDelta encodes the keys updated since the previous Snapshot or
// SnapshotDelta (every key before the first Snapshot or Restore).
func (r *runningSumOp) SnapshotDelta() ([]byte, error) {
	var keys []uint32
	if !r.tracking {
		keys = r.sortedKeys()
	} else {
		keys = slices.Clone(r.dirty)
		slices.Sort(keys)
	}
	b, err := r.encode(tagRunningDelta, keys)
	r.clearDirty()
	return b, err
}

type runRec struct {
	k uint32
	c runCell
}

func (r *runningSumOp) decode(b []byte, tag uint64) ([]runRec, error) {
	d := newDecoder(b, tag)
	n := d.arrayLen(5)
	recs := make([]runRec, 0, n)
	seen := make(map[uint32]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		var rec runRec
		rec.k = d.uint32()
		rec.c.n = d.int()
		rec.c.sum = d.float()
		rec.c.lin.N = d.uint32()
		rec.c.lin.Hash = d.uint()
		if d.err != nil {
			break
		}
		if rec.c.n <= 0 {
			d.fail("key %d with %d updates", rec.k, rec.c.n)
		}
		if _, dup := seen[rec.k]; dup {
			d.fail("duplicate key %d", rec.k)
		}
		seen[rec.k] = struct{}{}
		recs = append(recs, rec)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return recs, nil
}

// Restore replaces the state with a Snapshot; nil or empty means empty state.
// On error the state is unchanged.
func (r *runningSumOp) Restore(snap []byte) error {
	var recs []runRec
	if len(snap) > 0 {
		var err error
		if recs, err = r.decode(snap, tagRunningSnap); err != nil {
			return fmt.Errorf("running_sum: restore: %w", err)
		}
	}
	clear(r.cells)
	for _, rec := range recs {
		r.cells[rec.k] = rec.c
	}
	r.dirty = r.dirty[:0]
	r.tracking = true
	return nil
}

// ApplyDelta replaces the keys in a SnapshotDelta. On error the state is unchanged.
func (r *runningSumOp) ApplyDelta(delta []byte) error {
	recs, err := r.decode(delta, tagRunningDelta)
	if err != nil {
		return fmt.Errorf("running_sum: apply delta: %w", err)
	}
	for _, rec := range recs {
		r.cells[rec.k] = rec.c
	}
	r.clearDirty()
	return nil
}
