// Package classify is streamha's recovery classifier. It compares the output
// log of a failure-free run (O_e, "expected") with the output log delivered in
// a run with failures (O_f + O', "observed") and reports which kind of
// recovery the run achieved, in the sense of Hwang et al., "High-Availability
// Algorithms for Distributed Stream Processing" (ICDE 2005): precise,
// rollback (repeating, convergent or divergent) or gap.
//
// It is used in-process by the simulator's metrics, which hand it the sink's
// deliveries in place through a [Source] ([ClassifySource]), and by
// `streamha classify` on JSON Lines logs written by any system (see
// [ReadJSONL]), as slices of [Output] ([Classify]); both take the same path
// and give the same verdict for the same outputs.
//
// # Outputs and identity
//
// Every output has a logical id, a canonical value text and optionally a
// lineage count n (how many source tuples it reflects) and a delivery time t
// in milliseconds. Two outputs are identical when they have the same id, the
// same value text and — only when both carry n — the same n. Order matters
// only within a key (the Key field); outputs without a key form one group, so
// reordering across keys is never an anomaly.
//
// # Labels of observed deliveries
//
// Each observed delivery gets exactly one label, the first that applies:
//   - "ok": it is identical to an expected output of that id not yet matched
//     by an earlier delivery (an id expected k times may be delivered ok k
//     times);
//   - "duplicate": it is identical to an earlier delivery of that id;
//   - "wrong": its id is expected but its value or n differs;
//   - "spurious": its id is not expected at all.
//
// The counts of [Result] are computed whatever the type: Missing is the
// number of expected ids never delivered, Duplicates, Wrong and Spurious are
// the numbers of deliveries labelled so (a repeat of a wrong or spurious
// delivery counts as a duplicate).
//
// # Type and subtype
//
// The rules are applied in this order:
//   - precise: for every key, the observed sequence equals the expected
//     sequence exactly (same ids, values and n, same order, nothing extra).
//   - gap: some expected id is never delivered, or — when n is known on both
//     sides — the last delivered copy of an expected id reflects fewer source
//     tuples than expected. LostInputs sums the shortfall over expected ids:
//     expected n − n of the last delivered copy when positive, and the whole
//     expected n for an id never delivered (when n is known). If an id occurs
//     several times in the expected log, its last copy's n counts (so a log
//     always classifies against itself as precise).
//   - rollback otherwise (no input lost), with the first subtype that applies:
//
// Rollback subtypes:
//   - repeating: removing the duplicate deliveries gives exactly the expected
//     sequence for every key;
//   - convergent: for every key, the de-duplicated observed sequence ends in
//     a non-empty suffix equal to the end of the expected sequence (a key
//     with nothing expected but something observed cannot converge).
//     ConvergedAt is where that (longest) suffix begins, the latest over
//     keys: the delivery time in ms when every such first delivery carries a
//     time, otherwise its 0-based index in the observed slice;
//   - divergent: otherwise.
//
// # Explanations
//
// Explanations holds plain-English sentences, one per anomaly: each missing id,
// each group of identical copies of one delivery, each wrong and each
// spurious delivery, and — for a key whose only difference is order — the
// first position where its order departs from the failure-free run. Times
// are shown in seconds with two decimals and related to the [Mark]s: inside
// an interval mark "during <label>", else after the nearest preceding point
// mark "after <label> at X s", else after the latest interval mark that
// ended "after <label> at X–Y s", else before the first mark "before <label>
// at X s". Unknown times are omitted. Sentences are in time order when every
// output carries a time, otherwise in delivery order followed by the missing
// ids in expected order. Anomalies of one kind that fall in the same
// window (ids such as "k00|w=10s") and in the same context of the marks are
// told in one sentence that names up to six of them, e.g. "16 outputs of
// window 10 s wrong, delivered at 11.00 s after the takeover by B.1 at
// 10.62 s (1122 inputs lost): k00 49.16 instead of 119.1 (50 source tuples,
// not 117), …, and 10 more". Values are shown to 4 significant digits, or
// as many more as it takes to tell the observed from the expected value.
// At most [MaxExplanations] sentences are given,
// followed by one summary sentence of the rest: "… and N more anomalies
// (M missing, D duplicates, W wrong, S spurious)", where D counts groups of
// copies and ", R out of order" is added when some keys are only reordered. A precise run has no
// explanations (an empty, non-nil slice).
//
// Classify is deterministic: the same input always gives an identical Result.
// It runs in time linear in the size of the logs (a hash table of ids, no
// formatting per delivery), about a second or less for a million outputs.
package classify

import (
	"errors"
	"slices"
	"strconv"
)

// Recovery types (Result.Type).
const (
	TypePrecise  = "precise"
	TypeRollback = "rollback"
	TypeGap      = "gap"
)

// Rollback subtypes (Result.Subtype).
const (
	SubtypeRepeating  = "repeating"
	SubtypeConvergent = "convergent"
	SubtypeDivergent  = "divergent"
)

// Status is the label of one observed delivery (Result.Status), one byte
// a delivery; its String and MarshalText give the texts "ok", "duplicate",
// "wrong" and "spurious".
type Status uint8

// Delivery labels (Result.Status).
const (
	StatusOK Status = iota
	StatusDuplicate
	StatusWrong
	StatusSpurious
)

// statusTexts are the texts of the delivery labels, indexed by Status.
var statusTexts = [...]string{
	StatusOK:        "ok",
	StatusDuplicate: "duplicate",
	StatusWrong:     "wrong",
	StatusSpurious:  "spurious",
}

// String is the label's text: "ok", "duplicate", "wrong" or "spurious"
// ("Status(N)" for a value that is none of them).
func (s Status) String() string {
	if int(s) < len(statusTexts) {
		return statusTexts[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText encodes the label as its text (see String), so that JSON
// shows it as "ok", "duplicate", "wrong" or "spurious"; a value that is
// none of them is an error.
func (s Status) MarshalText() ([]byte, error) {
	if int(s) >= len(statusTexts) {
		return nil, errors.New("classify: invalid delivery label " + s.String())
	}
	return []byte(statusTexts[s]), nil
}

// MaxExplanations is the number of anomaly sentences given before the rest
// are summarised in one final sentence.
const MaxExplanations = 25

// Output is one delivered output.
type Output struct {
	ID    string  // logical id, e.g. "k03|w=9s" or "s0:17"
	Key   string  // ordering group; "" = the single default group
	Value string  // canonical text of the value (compared by string equality)
	N     int64   // lineage count (number of source tuples reflected); valid when HasN
	HasN  bool    // N is known
	T     float64 // delivery time in ms; valid when HasT
	HasT  bool    // T is known
}

// Mark is one annotated timeline point, used to phrase explanations, e.g.
// {At: 9400, Label: "the crash of B"}, or an interval
// {At: 9600, Until: 9900, Label: "the replay from upstream A"}.
// Times are in ms; Until 0 means a point.
type Mark struct {
	At, Until float64
	Label     string
}

// Result is the verdict of Classify.
type Result struct {
	Type       string `json:"type"`    // "precise" | "rollback" | "gap"
	Subtype    string `json:"subtype"` // "repeating" | "convergent" | "divergent" | "" (precise, gap)
	Missing    int    `json:"missing"`
	Duplicates int    `json:"duplicates"`
	Wrong      int    `json:"wrong"`
	Spurious   int    `json:"spurious"`
	LostInputs int64  `json:"lost_inputs"`
	// ConvergedAt is the time in ms (or the delivery index when times are
	// unknown) of the first delivery of the converged suffix, the latest
	// over keys; nil unless Subtype is convergent.
	ConvergedAt  *float64 `json:"converged_at"`
	Explanations []string `json:"explanations"`
	// Status labels each observed delivery (parallel to the observed slice):
	// StatusOK, StatusDuplicate, StatusWrong or StatusSpurious.
	Status []Status `json:"-"`
	// MissingIDs are the expected ids never delivered, in expected order.
	MissingIDs []string `json:"-"`
	// Index relates the two logs by id, for callers that compute more
	// figures from them without numbering the ids again.
	Index Index `json:"-"`
}

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

// Label is the recovery as one word or type/subtype ("rollback/repeating").
func (r Result) Label() string { return Label(r.Type, r.Subtype) }

// Label joins a recovery type and subtype the way every report shows them.
func Label(typ, subtype string) string {
	if subtype == "" {
		return typ
	}
	return typ + "/" + subtype
}

// Classify compares the observed output log against the expected
// (failure-free) one and reports the recovery type, the anomaly counts and
// one explanation per anomaly, phrased with the marks. See the package
// documentation for the exact rules.
func Classify(expected, observed []Output, marks []Mark) Result {
	vals := map[string]uint64{}
	return ClassifySource[string, string](outputSource{expected, vals}, outputSource{observed, vals}, marks)
}

// ClassifySource is Classify for logs read in place (see Source).
func ClassifySource[I, K comparable](expected, observed Source[I, K], marks []Mark) Result {
	keys := newKeyTable[K]()
	s := &state{
		expItem: itemReader(expected), obsItem: itemReader(observed),
		expKey: keyReader(expected, keys), obsKey: keyReader(observed, keys),
		expOut: expected.Output, obsOut: observed.Output,
	}
	ids := indexExpected(s, expected, observed, keys)
	res := Result{Explanations: []string{}, MissingIDs: []string{}}
	labelObserved(s, expected, observed, ids, keys, &res)
	s.nKeys = len(keys.idx)

	short := s.countLost(&res)
	gap := res.Missing > 0 || short

	equal := true // de-duplicated sequence equals expected for every key
	for k := range s.nKeys {
		if !s.keyEqual(k) {
			equal = false
			break
		}
	}

	switch {
	case equal && res.Duplicates == 0:
		res.Type = TypePrecise
	case gap:
		res.Type = TypeGap
	case equal:
		res.Type, res.Subtype = TypeRollback, SubtypeRepeating
	default:
		res.Type = TypeRollback
		if at, ok := s.convergence(); ok {
			res.Subtype = SubtypeConvergent
			res.ConvergedAt = &at
		} else {
			res.Subtype = SubtypeDivergent
		}
	}
	res.Status = s.status
	if res.Type != TypePrecise {
		res.Explanations = s.explain(&res, newMarkIndex(marks))
	}
	// The explanations are written: idOfObs can be handed out, with the
	// ids of unexpected outputs made -1.
	for i, d := range s.idOfObs {
		if int(d) >= s.nExpIDs {
			s.idOfObs[i] = -1
		}
	}
	res.Index = Index{First: s.expHead, Observed: s.idOfObs}
	return res
}

// indexExpected builds the id and key indices of the expected log and
// returns the id index (expected ids first).
func indexExpected[I, K comparable](s *state, expected, observed Source[I, K], keys *keyTable[K]) *idTable[I] {
	ne := expected.Len()
	ids := newIDTable(ne, func(d int32) I {
		if int(d) < len(s.expHead) {
			return expected.ID(int(s.expHead[d]))
		}
		return observed.ID(int(s.unexpected[int(d)-len(s.expHead)]))
	})
	s.idOfExp = make([]int32, ne)
	s.expNext = make([]int32, ne)
	keyOf := make([]int32, ne) // only until expByKey is built
	// Sized for every expected output having its own id, the usual case,
	// so that they never grow (and leave copies behind) on long logs.
	s.expHead = make([]int32, 0, ne)
	expTail := make([]int32, 0, ne)
	s.allT = true
	for i := range ne {
		en := expected.Entry(i)
		s.allT = s.allT && en.HasT
		d, ok := ids.get(expected.ID(i), int32(len(s.expHead)))
		if !ok {
			s.expHead = append(s.expHead, int32(i))
			expTail = append(expTail, int32(i))
		} else {
			s.expNext[expTail[d]] = int32(i)
			expTail[d] = int32(i)
		}
		s.idOfExp[i] = d
		s.expNext[i] = -1
		keyOf[i] = keys.get(en.Key)
	}
	s.nExpIDs = len(s.expHead)
	s.expByKey = groupByKey(keyOf, len(keys.idx))
	return ids
}

// groupByKey lists, per key, the indices i with keyOf[i] equal to it, in
// order: sub-slices of one array of len(keyOf), counted before they are
// filled rather than grown.
func groupByKey(keyOf []int32, nKeys int) [][]int32 {
	start := make([]int, nKeys+1)
	for _, k := range keyOf {
		start[k+1]++
	}
	for k := range nKeys {
		start[k+1] += start[k]
	}
	all := make([]int32, len(keyOf))
	next := slices.Clone(start[:nKeys])
	for i, k := range keyOf {
		all[next[k]] = int32(i)
		next[k]++
	}
	out := make([][]int32, nKeys)
	for k := range nKeys {
		out[k] = all[start[k]:start[k+1]:start[k+1]]
	}
	return out
}

// labelObserved labels every observed delivery and counts the labels.
func labelObserved[I, K comparable](s *state, expected, observed Source[I, K], ids *idTable[I], keys *keyTable[K], res *Result) {
	no, ne := observed.Len(), expected.Len()
	consumed := make([]bool, ne)
	s.status = make([]Status, no)
	s.origin = make([]int32, no)
	s.idOfObs = make([]int32, no)
	varNext := make([]int32, no)        // observed index -> next distinct variant of the same id
	varHead := make([]int32, s.nExpIDs) // id index -> first observed index, -1
	s.lastObs = make([]int32, s.nExpIDs)
	for d := range varHead {
		varHead[d], s.lastObs[d] = -1, -1
	}
	s.dedByKey = make([][]int32, len(s.expByKey))
	for k, e := range s.expByKey {
		s.dedByKey[k] = make([]int32, 0, len(e))
	}
	// cur is the expected index following the last matched id: observed
	// logs mostly follow the expected order, so comparing with it first
	// avoids most map lookups (and their cache misses) on large logs.
	cur := 0
	for i := range no {
		en := observed.Entry(i)
		oi := itemOf(en)
		s.allT = s.allT && en.HasT
		id := observed.ID(i)
		var d int32
		if cur < ne && expected.ID(cur) == id {
			d = s.idOfExp[cur]
			cur++
		} else {
			var ok bool
			d, ok = ids.get(id, int32(len(varHead)))
			switch {
			case !ok:
				s.unexpected = append(s.unexpected, int32(i))
				varHead = append(varHead, -1)
				s.lastObs = append(s.lastObs, -1)
			case int(d) < s.nExpIDs:
				cur = int(s.expHead[d]) + 1
			}
		}
		s.idOfObs[i] = d
		i32 := int32(i)
		// Both chains below hold outputs of id d only: comparing values suffices.
		matched := int(d) < s.nExpIDs && consume(expected, s.expHead[d], s.expNext, consumed, &oi)
		// match is the first variant identical to this delivery; without
		// one, tail is the last variant (the loop walked the whole chain).
		match, tail := int32(-1), int32(-1)
		for v := varHead[d]; v >= 0; v = varNext[v] {
			if vi := itemOf(observed.Entry(int(v))); sameValue(&vi, &oi) {
				match = v
				break
			}
			tail = v
		}
		s.origin[i] = i32
		st := StatusOK
		if !matched && match >= 0 {
			st = StatusDuplicate
			s.origin[i] = match
			res.Duplicates++
		} else {
			if match < 0 { // a new distinct variant of this id
				varNext[i] = -1
				if tail < 0 {
					varHead[d] = i32
				} else {
					varNext[tail] = i32
				}
			}
			switch {
			case matched:
			case int(d) < s.nExpIDs:
				st = StatusWrong
				res.Wrong++
			default:
				st = StatusSpurious
				res.Spurious++
			}
		}
		s.status[i] = st
		s.lastObs[d] = i32
		k := keys.get(en.Key)
		for int(k) >= len(s.dedByKey) {
			s.dedByKey = append(s.dedByKey, nil)
			s.expByKey = append(s.expByKey, nil)
		}
		if st != StatusDuplicate {
			s.dedByKey[k] = append(s.dedByKey[k], i32)
		}
	}
}

// consume marks as consumed the first expected output not yet consumed in
// the chain from e (linked by next) that is identical in value to o, and
// reports whether there was one.
func consume[I, K comparable](expected Source[I, K], e int32, next []int32, consumed []bool, o *item) bool {
	for ; e >= 0; e = next[e] {
		if consumed[e] {
			continue
		}
		if ei := itemOf(expected.Entry(int(e))); sameValue(&ei, o) {
			consumed[e] = true
			return true
		}
	}
	return false
}

// countLost counts the missing ids (in expected order) and the lost inputs
// into res, and reports whether the last delivered copy of some expected id
// reflects fewer source tuples than expected.
func (s *state) countLost(res *Result) (short bool) {
	for d := range int32(s.nExpIDs) {
		if s.lastObs[d] < 0 {
			res.Missing++
			res.MissingIDs = append(res.MissingIDs, s.expOut(int(s.expHead[d])).ID)
			if n, ok := s.expN(d); ok {
				res.LostInputs += n
			}
			continue
		}
		if sf := s.shortfall(d); sf > 0 {
			res.LostInputs += sf
			short = true
		}
	}
	return short
}

// shortfall is expected n − n of the last delivered copy of id d when both
// are known and positive, else 0 (also 0 for an id never delivered).
func (s *state) shortfall(d int32) int64 {
	if int(d) >= s.nExpIDs {
		return 0
	}
	last := s.lastObs[d]
	// An ok delivery of an id expected once matched it, n included.
	if last < 0 || s.status[last] == StatusOK && s.single(d) {
		return 0
	}
	o := s.obsItem(last)
	if !o.hasN {
		return 0
	}
	if n, ok := s.expN(d); ok && o.n < n {
		return n - o.n
	}
	return 0
}

// keyEqual reports whether the de-duplicated observed sequence of key k
// equals its expected sequence.
func (s *state) keyEqual(k int) bool {
	e, o := s.expByKey[k], s.dedByKey[k]
	if len(e) != len(o) {
		return false
	}
	for i := range e {
		if !s.sameEO(e[i], o[i]) {
			return false
		}
	}
	return true
}

// commonSuffix is the length of the longest common suffix of the expected
// and de-duplicated observed sequences of key k.
func (s *state) commonSuffix(k int) int {
	e, o := s.expByKey[k], s.dedByKey[k]
	n := 0
	for n < len(e) && n < len(o) && s.sameEO(e[len(e)-1-n], o[len(o)-1-n]) {
		n++
	}
	return n
}

// convergence reports whether every key converges, and where: the latest
// first delivery of the converged suffixes, as a time in ms when all of
// them carry a time, else as an observed index.
func (s *state) convergence() (float64, bool) {
	if s.nKeys == 0 {
		return 0, false
	}
	maxT, maxIdx, allT := 0.0, int32(-1), true
	for k := range s.nKeys {
		n := s.commonSuffix(k)
		if n == 0 {
			return 0, false
		}
		o := s.dedByKey[k]
		start := o[len(o)-n]
		maxIdx = max(maxIdx, start)
		if ob := s.obsItem(start); !ob.hasT {
			allT = false
		} else if k == 0 || ob.t > maxT {
			maxT = ob.t
		}
	}
	if allT {
		return maxT, true
	}
	return float64(maxIdx), true
}
