package ops

import (
	"fmt"
	"slices"

	"github.com/streamha/streamha/ha"
)

// keyedCell is the state of one key of an aggregate kept for every key
// seen: its update count, the aggregate v, its lineage, and whether it
// changed since the last snapshot.
type keyedCell[V any] struct {
	n     int64
	v     V
	lin   ha.Lineage
	dirty bool
}

// keyedCodec is how a keyed aggregate's value is named and encoded.
type keyedCodec[V any] struct {
	name              string // the operator, for errors
	unit              string // what n counts, for errors ("updates")
	snapTag, deltaTag uint64
	minBytes          int // encoded bytes per key at least (key, n, v, lineage)
	encode            func(e *encoder, v V)
	decode            func(d *decoder) V
}

// keyed is the state of an aggregate kept per key for the whole history
// (running_sum, hash_chain) and the bookkeeping of its incremental
// snapshots: embedded in an operator, it provides StateEntries, Oldest,
// Snapshot, SnapshotDelta, Restore and ApplyDelta.
type keyed[V any] struct {
	codec    *keyedCodec[V]
	cells    map[uint32]keyedCell[V]
	tracking bool
	dirty    []uint32
}

func newKeyed[V any](codec *keyedCodec[V]) keyed[V] {
	return keyed[V]{codec: codec, cells: make(map[uint32]keyedCell[V])}
}

// StateEntries is the number of keys seen.
func (k *keyed[V]) StateEntries() int { return len(k.cells) }

// Oldest is (0, true) once any key is held: the state depends on all history.
func (k *keyed[V]) Oldest() (int64, bool) { return 0, len(k.cells) > 0 }

// store writes back key's cell c after an update, noting it for the next
// SnapshotDelta.
func (k *keyed[V]) store(key uint32, c keyedCell[V]) {
	if k.tracking && !c.dirty {
		c.dirty = true
		k.dirty = append(k.dirty, key)
	}
	k.cells[key] = c
}

func (k *keyed[V]) encode(tag uint64, keys []uint32) ([]byte, error) {
	e := newEncoder(tag)
	e.arrayLen(len(keys))
	for _, key := range keys {
		c := k.cells[key]
		e.uint(uint64(key))
		e.int(c.n)
		k.codec.encode(e, c.v)
		e.lineage(c.lin.N, c.lin.Hash)
	}
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: encode state: %w", k.codec.name, err)
	}
	return b, nil
}

func (k *keyed[V]) clearDirty() {
	for _, key := range k.dirty {
		c := k.cells[key]
		c.dirty = false
		k.cells[key] = c
	}
	k.dirty = k.dirty[:0]
	k.tracking = true
}

// Snapshot encodes every key's count, aggregate and lineage in key order.
func (k *keyed[V]) Snapshot() ([]byte, error) {
	b, err := k.state()
	k.clearDirty()
	return b, err
}

// state encodes the full state without starting a new checkpoint epoch.
func (k *keyed[V]) state() ([]byte, error) { return k.encode(k.codec.snapTag, k.sortedKeys()) }

func (k *keyed[V]) sortedKeys() []uint32 {
	keys := make([]uint32, 0, len(k.cells))
	for key := range k.cells {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// SnapshotDelta encodes the keys updated since the previous Snapshot or
// SnapshotDelta (every key before the first Snapshot or Restore).
func (k *keyed[V]) SnapshotDelta() ([]byte, error) {
	var keys []uint32
	if !k.tracking {
		keys = k.sortedKeys()
	} else {
		keys = slices.Clone(k.dirty)
		slices.Sort(keys)
	}
	b, err := k.encode(k.codec.deltaTag, keys)
	k.clearDirty()
	return b, err
}

type keyedRec[V any] struct {
	key uint32
	c   keyedCell[V]
}

func (k *keyed[V]) decode(b []byte, tag uint64) ([]keyedRec[V], error) {
	d := newDecoder(b, tag)
	n := d.arrayLen(k.codec.minBytes)
	recs := make([]keyedRec[V], 0, n)
	seen := make(map[uint32]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		var rec keyedRec[V]
		rec.key = d.uint32()
		rec.c.n = d.int()
		rec.c.v = k.codec.decode(d)
		rec.c.lin.N = d.uint32()
		rec.c.lin.Hash = d.uint()
		if d.err != nil {
			break
		}
		if rec.c.n <= 0 {
			d.fail("key %d with %d %s", rec.key, rec.c.n, k.codec.unit)
		}
		if _, dup := seen[rec.key]; dup {
			d.fail("duplicate key %d", rec.key)
		}
		seen[rec.key] = struct{}{}
		recs = append(recs, rec)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return recs, nil
}

// Restore replaces the state with a Snapshot; nil or empty means empty state.
// On error the state is unchanged.
func (k *keyed[V]) Restore(snap []byte) error {
	var recs []keyedRec[V]
	if len(snap) > 0 {
		var err error
		if recs, err = k.decode(snap, k.codec.snapTag); err != nil {
			return fmt.Errorf("%s: restore: %w", k.codec.name, err)
		}
	}
	clear(k.cells)
	for _, rec := range recs {
		k.cells[rec.key] = rec.c
	}
	k.dirty = k.dirty[:0]
	k.tracking = true
	return nil
}

// ApplyDelta replaces the keys in a SnapshotDelta. On error the state is unchanged.
func (k *keyed[V]) ApplyDelta(delta []byte) error {
	recs, err := k.decode(delta, k.codec.deltaTag)
	if err != nil {
		return fmt.Errorf("%s: apply delta: %w", k.codec.name, err)
	}
	for _, rec := range recs {
		k.cells[rec.key] = rec.c
	}
	k.clearDirty()
	return nil
}
