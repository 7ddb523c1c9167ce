package classify

// Index numbers the distinct expected ids in order of first delivery.
type Index struct {
	// First[d] is the expected index of the first output with id d.
	First []int32
	// Observed[i] is the id of observed output i, -1 when not expected.
	Observed []int32
}

// Source is an output log the classifier reads in place, without first
// converting every output to an Output of strings: ClassifySource compares
// outputs by their ids and keys as values of any comparable type and by a
// value identity, and asks for an Output only to phrase explanations. The
// simulator's metrics read sink deliveries this way; Classify reads Outputs.
type Source[I, K comparable] interface {
	// Len is the number of outputs.
	Len() int
	// ID is output i's logical id.
	ID(i int) I
	// Entry is output i as the classifier compares it. The classifier
	// keeps no copy of it and may ask again for the same output, so it
	// must give the same entry every time.
	Entry(i int) Entry[K]
	// Output is output i as text, for the explanations.
	Output(i int) Output
}

// Entry is one output of a Source: its ordering key, a value identity
// (equal exactly when the canonical value texts are equal), and its lineage
// count and delivery time (ms) when known.
type Entry[K comparable] struct {
	Key   K
	Value uint64
	N     int64
	HasN  bool
	T     float64
	HasT  bool
}

// item is what the classifier compares of one output beyond its id and key,
// read through its Source when needed rather than kept per output.
type item struct {
	val  uint64
	n    int64
	t    float64
	hasN bool
	hasT bool
}

func itemOf[K comparable](e Entry[K]) item {
	return item{val: e.Value, n: e.N, t: e.T, hasN: e.HasN, hasT: e.HasT}
}

// itemReader reads output i of src as an item.
func itemReader[I, K comparable](src Source[I, K]) func(i int32) item {
	return func(i int32) item { return itemOf(src.Entry(int(i))) }
}

// keyReader reads the key index of output i of src; every key of src must
// be in keys already.
func keyReader[I, K comparable](src Source[I, K], keys *keyTable[K]) func(i int32) int32 {
	return func(i int32) int32 { return keys.get(src.Entry(int(i)).Key) }
}

// sameValue reports whether two outputs of the same id are identical: the
// same value, and the same n when both carry one.
func sameValue(a, b *item) bool {
	return a.val == b.val && (!a.hasN || !b.hasN || a.n == b.n)
}

// sameEO reports whether expected output e and observed output o are
// identical: the same id, and sameValue. An observed output labelled ok
// whose id is expected once was matched with that expected output, so the
// two are identical without reading either.
func (s *state) sameEO(e, o int32) bool {
	d := s.idOfObs[o]
	if s.idOfExp[e] != d {
		return false
	}
	if s.status[o] == StatusOK && s.single(d) {
		return true
	}
	a, b := s.expItem(e), s.obsItem(o)
	return sameValue(&a, &b)
}

// single reports whether expected id d occurs once in the expected log.
func (s *state) single(d int32) bool { return s.expNext[s.expHead[d]] < 0 }

// keyTable maps keys to dense indices in first-appearance order.
type keyTable[K comparable] struct {
	idx     map[K]int32
	lastKey K
	lastIdx int32
}

func newKeyTable[K comparable]() *keyTable[K] {
	return &keyTable[K]{idx: make(map[K]int32), lastIdx: -1}
}

func (k *keyTable[K]) get(key K) int32 {
	if k.lastIdx >= 0 && key == k.lastKey {
		return k.lastIdx
	}
	i, ok := k.idx[key]
	if !ok {
		i = int32(len(k.idx))
		k.idx[key] = i
	}
	k.lastKey, k.lastIdx = key, i
	return i
}

// state is the working data of one classification. It keeps 12 bytes an
// expected output, 13 an observed one and 8 an id (beyond the id table and
// what labelling needs only while it runs); what else it needs of an
// output it reads through the Sources again.
type state struct {
	expItem, obsItem func(int32) item  // the outputs as compared
	expKey, obsKey   func(int32) int32 // the outputs' key indices (explanations)
	expOut, obsOut   func(int) Output  // the outputs as text (explanations)
	nExpIDs          int
	nKeys            int
	allT             bool // every expected and observed output carries a time

	idOfExp []int32 // expected index -> id index
	expHead []int32 // id index -> first expected index
	expNext []int32 // expected index -> next expected index of the same id, -1
	idOfObs []int32 // observed index -> id index
	// unexpected[d-nExpIDs] is the first observed index of id d, an id
	// not expected.
	unexpected []int32
	lastObs    []int32 // id index -> last observed index, -1
	origin     []int32 // observed index -> first identical delivery (itself unless duplicate)
	status     []Status
	expByKey   [][]int32 // key -> expected indices
	dedByKey   [][]int32 // key -> non-duplicate observed indices
}

// expN is the lineage count of the last expected copy of id d that carries
// one, and whether any does.
func (s *state) expN(d int32) (n int64, ok bool) {
	for e := s.expHead[d]; e >= 0; e = s.expNext[e] {
		if it := s.expItem(e); it.hasN {
			n, ok = it.n, true
		}
	}
	return n, ok
}

// keyName is key k's text ("" = the default group).
func (s *state) keyName(k int) string {
	if e := s.expByKey[k]; len(e) > 0 {
		return s.expOut(int(e[0])).Key
	}
	return s.obsOut(int(s.dedByKey[k][0])).Key
}

// outputSource reads a slice of Outputs; value texts are interned in vals,
// which the expected and observed sources share.
type outputSource struct {
	outs []Output
	vals map[string]uint64
}

func (s outputSource) Len() int            { return len(s.outs) }
func (s outputSource) ID(i int) string     { return s.outs[i].ID }
func (s outputSource) Output(i int) Output { return s.outs[i] }

func (s outputSource) Entry(i int) Entry[string] {
	o := &s.outs[i]
	v, ok := s.vals[o.Value]
	if !ok {
		v = uint64(len(s.vals))
		s.vals[o.Value] = v
	}
	return Entry[string]{Key: o.Key, Value: v, N: o.N, HasN: o.HasN, T: o.T, HasT: o.HasT}
}
