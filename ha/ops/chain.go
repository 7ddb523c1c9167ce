package ops

import (
	"crypto/sha256"
	"encoding/binary"
	"math"

	"github.com/streamha/streamha/ha"
)

// chainBits is the width of the integer a hash chain emits: every integer
// below 2^53 is exact in a float64, so the output value carries the
// fingerprint without any rounding.
const chainBits = 52

// hashChainOp emits, for every input, the head of its key's hash chain: a
// fingerprint of the key's whole input sequence in arrival order, as an
// append-only audit log keeps one to make any later change to the sequence
// evident. Unlike a sum, two inputs taken in the other order give another
// head, and every later head differs too: the state keeps the order for
// good.
//
// A key's cell holds the head after n values: SHA-256 over the previous
// head and the newest value (chainStep).
type hashChainOp struct {
	keyed[[sha256.Size]byte]
}

// chainWords is the number of 64-bit words a chain head is encoded as.
const chainWords = sha256.Size / 8

// chainCodec encodes a key's chain head as chainWords unsigned words.
var chainCodec = &keyedCodec[[sha256.Size]byte]{name: "hash_chain", unit: "values", snapTag: tagChainSnap, deltaTag: tagChainDelta,
	minBytes: 4 + chainWords, // key, n, the head's words, lineage N and hash
	encode: func(e *encoder, h [sha256.Size]byte) {
		for i := range chainWords {
			e.uint(binary.BigEndian.Uint64(h[8*i:]))
		}
	},
	decode: func(d *decoder) (h [sha256.Size]byte) {
		for w := range chainWords {
			binary.BigEndian.PutUint64(h[8*w:], d.uint())
		}
		return h
	}}

func newHashChain() *hashChainOp { return &hashChainOp{keyed: newKeyed(chainCodec)} }

func (*hashChainOp) Name() string    { return "hash_chain" }
func (*hashChainOp) Class() ha.Class { return ha.Deterministic }

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
	cell.v = chainStep(cell.v, t.Value)
	cell.lin.Add(t.Lineage)
	c.store(t.Key, cell)
	emit(ha.Tuple{
		Key:     t.Key,
		Time:    t.Time,
		Emit:    t.Emit,
		Value:   chainValue(cell.v),
		ID:      ha.OutputID{Kind: ha.IDKey, Key: t.Key, X: cell.n},
		Lineage: cell.lin,
	})
}
