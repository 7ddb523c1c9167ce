package classify

import (
	"hash/maphash"
	"math/bits"
)

// idTable numbers ids densely, in place of a map[I]int32 (about 68 bytes
// an id at ten million ids): an open-addressing table of 8-byte slots, at
// most three quarters full, whose ids stay in the logs themselves — at(d)
// reads id d back — so only a 32-bit fragment of each id's hash is stored
// beside its number to skip most comparisons. About 11–21 bytes an id.
type idTable[I comparable] struct {
	seed  maphash.Seed
	slots []uint64 // hash fragment << 32 | (d + 1); 0 = empty
	mask  uint64
	n     int
	at    func(d int32) I
}

// newIDTable returns a table sized for n ids; at(d) must return the id
// numbered d for every d inserted.
func newIDTable[I comparable](n int, at func(d int32) I) *idTable[I] {
	t := &idTable[I]{seed: maphash.MakeSeed(), at: at}
	t.resize(n)
	return t
}

// resize allocates room for n ids (at most 3/4 full) and reinserts them.
func (t *idTable[I]) resize(n int) {
	size := uint64(8)
	if need := uint64(n) * 4 / 3; need > size {
		size = 1 << bits.Len64(need-1)
	}
	old := t.slots
	t.slots, t.mask = make([]uint64, size), size-1
	for _, s := range old {
		if s != 0 {
			t.place(s)
		}
	}
}

// place stores slot value s (known absent) in its first free slot.
func (t *idTable[I]) place(s uint64) {
	h := s >> 32
	for i := mix(h) & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i] == 0 {
			t.slots[i] = s
			return
		}
	}
}

// mix spreads a 32-bit hash fragment over the slot index bits.
func mix(h uint64) uint64 { return h * 0x9e3779b97f4a7c15 >> 32 }

// get returns id's number and true, or, when id is absent, numbers it next
// and returns next and false.
func (t *idTable[I]) get(id I, next int32) (int32, bool) {
	h := maphash.Comparable(t.seed, id) >> 32
	i := mix(h) & t.mask
	for ; t.slots[i] != 0; i = (i + 1) & t.mask {
		if s := t.slots[i]; s>>32 == h {
			if d := int32(uint32(s)) - 1; t.at(d) == id {
				return d, true
			}
		}
	}
	t.slots[i] = h<<32 | uint64(uint32(next+1))
	t.n++
	if t.n*4 > len(t.slots)*3 {
		t.resize(2 * t.n)
	}
	return next, false
}
