package ops

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/streamha/streamha/ha"
)

// chainBits is the width of the integer a hash chain emits: every integer
// below 2^53 is exact in a float64, so the output value carries the
// fingerprint without any rounding.
const chainBits = 52

// chainCell is the hash chain of one key: h is SHA-256 over the previous h
// and the newest value, after n values.
type chainCell struct {
	n     int64
	h     [sha256.Size]byte
	lin   ha.Lineage
	dirty bool
}

// hashChainOp emits, for every input, the head of its key's hash chain: a
// fingerprint of the key's whole input sequence in arrival order, as an
// append-only audit log keeps one to make any later change to the sequence
// evident. Unlike a sum, two inputs taken in the other order give another
// head, and every later head differs too: the state keeps the order for
// good.
type hashChainOp struct {
	cells    map[uint32]chainCell
	tracking bool
	dirty    []uint32
}

func newHashChain() *hashChainOp { return &hashChainOp{cells: make(map[uint32]chainCell)} }

func (*hashChainOp) Name() string    { return "hash_chain" }
func (*hashChainOp) Class() ha.Class { return ha.Deterministic }

// StateEntries is the number of keys seen.
func (c *hashChainOp) StateEntries() int { return len(c.cells) }

// Oldest is (0, true) once any key is held: the state depends on all history.
func (c *hashChainOp) Oldest() (int64, bool) { return 0, len(c.cells) > 0 }

// chainStep is SHA-256(h ‖ v), v as its IEEE-754 bits in big-endian order
// (-0 as +0, so that equal values chain equally).
func chainStep(h [sha256.Size]byte, v float64) [sha256.Size]byte {
	if v == 0 {
		v = 0
	}
	var buf [sha256.Size + 8]byte
	copy(buf[:], h[:])
	binary.BigEndian.PutUint64(buf[sha256.Size:], math.Float64bits(v))
	return sha256.Sum256(buf[:])
}

// chainValue is the first 52 bits of h as an integer.
func chainValue(h [sha256.Size]byte) float64 {
	return float64(binary.BigEndian.Uint64(h[:8]) >> (64 - chainBits))
}

// Process extends t's key's chain with t's value and emits the new head
// with id key#n.
func (c *hashChainOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		emit(t)
		return
	}
	cell := c.cells[t.Key]
	cell.n++
	cell.h = chainStep(cell.h, t.Value)
	cell.lin.Add(t.Lineage)
	if c.tracking && !cell.dirty {
		cell.dirty = true
		c.dirty = append(c.dirty, t.Key)
	}
	c.cells[t.Key] = cell
	emit(ha.Tuple{
		Key:     t.Key,
		Time:    t.Time,
		Emit:    t.Emit,
		Value:   chainValue(cell.h),
		ID:      ha.OutputID{Kind: ha.IDKey, Key: t.Key, X: cell.n},
		Lineage: cell.lin,
	})
}

// chainWords is the number of 64-bit words a chain head is encoded as.
const chainWords = sha256.Size / 8

func (c *hashChainOp) encode(tag uint64, keys []uint32) ([]byte, error) {
	e := newEncoder(tag)
	e.arrayLen(len(keys))
	for _, k := range keys {
		cell := c.cells[k]
		e.uint(uint64(k))
		e.int(cell.n)
		for i := range chainWords {
			e.uint(binary.BigEndian.Uint64(cell.h[8*i:]))
		}
		e.lineage(cell.lin.N, cell.lin.Hash)
	}
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("hash_chain: encode state: %w", err)
	}
	return b, nil
}

func (c *hashChainOp) clearDirty() {
	for _, k := range c.dirty {
		cell := c.cells[k]
		cell.dirty = false
		c.cells[k] = cell
	}
	c.dirty = c.dirty[:0]
	c.tracking = true
}

// Snapshot encodes every key's count, chain head and lineage in key order.
func (c *hashChainOp) Snapshot() ([]byte, error) {
	b, err := c.state()
	c.clearDirty()
	return b, err
}

// state encodes the full state without starting a new checkpoint epoch.
func (c *hashChainOp) state() ([]byte, error) { return c.encode(tagChainSnap, c.sortedKeys()) }

func (c *hashChainOp) sortedKeys() []uint32 {
	keys := make([]uint32, 0, len(c.cells))
	for k := range c.cells {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SnapshotDelta encodes the keys updated since the previous Snapshot or
// SnapshotDelta (every key before the first Snapshot or Restore).
func (c *hashChainOp) SnapshotDelta() ([]byte, error) {
	var keys []uint32
	if !c.tracking {
		keys = c.sortedKeys()
	} else {
		keys = slices.Clone(c.dirty)
		slices.Sort(keys)
	}
	b, err := c.encode(tagChainDelta, keys)
	c.clearDirty()
	return b, err
}

type chainRec struct {
	k    uint32
	cell chainCell
}

func (c *hashChainOp) decode(b []byte, tag uint64) ([]chainRec, error) {
	d := newDecoder(b, tag)
	n := d.arrayLen(4 + chainWords) // key, n, the head's words, lineage N and hash
	recs := make([]chainRec, 0, n)
	seen := make(map[uint32]struct{}, n)
	for i := 0; i < n && d.err == nil; i++ {
		var rec chainRec
		rec.k = d.uint32()
		rec.cell.n = d.int()
		for w := range chainWords {
			binary.BigEndian.PutUint64(rec.cell.h[8*w:], d.uint())
		}
		rec.cell.lin.N = d.uint32()
		rec.cell.lin.Hash = d.uint()
		if d.err != nil {
			break
		}
		if rec.cell.n <= 0 {
			d.fail("key %d with %d values", rec.k, rec.cell.n)
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
func (c *hashChainOp) Restore(snap []byte) error {
	var recs []chainRec
	if len(snap) > 0 {
		var err error
		if recs, err = c.decode(snap, tagChainSnap); err != nil {
			return fmt.Errorf("hash_chain: restore: %w", err)
		}
	}
	clear(c.cells)
	for _, rec := range recs {
		c.cells[rec.k] = rec.cell
	}
	c.dirty = c.dirty[:0]
	c.tracking = true
	return nil
}

// ApplyDelta replaces the keys in a SnapshotDelta. On error the state is unchanged.
func (c *hashChainOp) ApplyDelta(delta []byte) error {
	recs, err := c.decode(delta, tagChainDelta)
	if err != nil {
		return fmt.Errorf("hash_chain: apply delta: %w", err)
	}
	for _, rec := range recs {
		c.cells[rec.k] = rec.cell
	}
	c.clearDirty()
	return nil
}
