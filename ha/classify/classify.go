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
// Explanations holds one plain-English sentence per anomaly: each missing id,
// each group of identical copies of one delivery, each wrong and each
// spurious delivery, and — for a key whose only difference is order — the
// first position where its order departs from the failure-free run. Times
// are shown in seconds with two decimals and related to the [Mark]s: inside
// an interval mark "during <label>", else after the nearest preceding point
// mark "after <label> at X s", else after the latest interval mark that
// ended "after <label> at X–Y s", else before the first mark "before <label>
// at X s". Unknown times are omitted. Sentences are in time order when every
// output carries a time, otherwise in delivery order followed by the missing
// ids in expected order. At most [MaxExplanations] sentences are given,
// followed by one summary sentence of the rest: "… and N more anomalies
// (M missing, D duplicates, W wrong, S spurious)", where D counts groups of
// copies and ", R out of order" is added when some keys are only reordered. A precise run has no
// explanations (an empty, non-nil slice).
//
// Classify is deterministic: the same input always gives an identical Result.
// It runs in time linear in the size of the logs (a hash table of ids, no
// formatting per delivery), about a second or less for a million outputs.
package classify

import "slices"

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

// Delivery labels (Result.Status).
const (
	StatusOK        = "ok"
	StatusDuplicate = "duplicate"
	StatusWrong     = "wrong"
	StatusSpurious  = "spurious"
)

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
	Status []string `json:"-"`
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
	// Entry is output i as the classifier compares it.
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

// item is what the classifier keeps of one output beyond its id and key
// indices.
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

// sameValue reports whether two outputs of the same id are identical: the
// same value, and the same n when both carry one.
func sameValue(a, b *item) bool {
	return a.val == b.val && (!a.hasN || !b.hasN || a.n == b.n)
}

// sameEO reports whether expected output e and observed output o are
// identical: the same id, and sameValue.
func (s *state) sameEO(e, o int32) bool {
	return s.idOfExp[e] == s.idOfObs[o] && sameValue(&s.e[e], &s.o[o])
}

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

// state is the working data of one classification.
type state struct {
	e, o           []item           // expected and observed outputs
	expOut, obsOut func(int) Output // the outputs as text (explanations)
	nExpIDs        int
	nKeys          int

	idOfExp []int32 // expected index -> id index
	expHead []int32 // id index -> first expected index
	expNext []int32 // expected index -> next expected index of the same id, -1
	expN    []int64 // id index -> n of the last expected copy
	expHasN []bool  // id index -> some expected copy carries n
	idOfObs []int32 // observed index -> id index
	// unexpected[d-nExpIDs] is the first observed index of id d, an id
	// not expected.
	unexpected []int32
	lastObs    []int32 // id index -> last observed index, -1
	origin     []int32 // observed index -> first identical delivery (itself unless duplicate)
	status     []string
	keyOfExp   []int32
	keyOfObs   []int32
	expByKey   [][]int32 // key -> expected indices
	dedByKey   [][]int32 // key -> non-duplicate observed indices
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
	s := &state{expOut: expected.Output, obsOut: observed.Output}
	keys := newKeyTable[K]()
	ids := indexExpected(s, expected, observed, keys)
	res := Result{Explanations: []string{}, MissingIDs: []string{}}
	labelObserved(s, expected, observed, ids, keys, &res)
	s.nKeys = len(keys.idx)

	// Missing ids and lost inputs.
	for d := 0; d < s.nExpIDs; d++ {
		last := s.lastObs[d]
		if last < 0 {
			res.Missing++
			res.MissingIDs = append(res.MissingIDs, expected.Output(int(s.expHead[d])).ID)
			if s.expHasN[d] {
				res.LostInputs += s.expN[d]
			}
			continue
		}
		if o := &s.o[last]; o.hasN && s.expHasN[d] && o.n < s.expN[d] {
			res.LostInputs += s.expN[d] - o.n
		}
	}
	gap := res.Missing > 0 || s.anyShortfall()

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
	s.e = make([]item, ne)
	s.idOfExp = make([]int32, ne)
	s.expNext = make([]int32, ne)
	s.keyOfExp = make([]int32, ne)
	// Sized for every expected output having its own id, the usual case,
	// so that they never grow (and leave copies behind) on long logs.
	s.expHead = make([]int32, 0, ne)
	expTail := make([]int32, 0, ne)
	s.expN = make([]int64, 0, ne)
	s.expHasN = make([]bool, 0, ne)
	for i := range ne {
		en := expected.Entry(i)
		s.e[i] = itemOf(en)
		id := expected.ID(i)
		d, ok := ids.get(id, int32(len(s.expHead)))
		if !ok {
			s.expHead = append(s.expHead, int32(i))
			expTail = append(expTail, int32(i))
			s.expN = append(s.expN, en.N)
			s.expHasN = append(s.expHasN, en.HasN)
		} else {
			s.expNext[expTail[d]] = int32(i)
			expTail[d] = int32(i)
			if en.HasN {
				s.expN[d], s.expHasN[d] = en.N, true
			}
		}
		s.idOfExp[i] = d
		s.expNext[i] = -1
		k := keys.get(en.Key)
		s.keyOfExp[i] = k
	}
	s.nExpIDs = len(s.expHead)
	s.expByKey = groupByKey(s.keyOfExp, len(keys.idx))
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
	s.o = make([]item, no)
	s.status = make([]string, no)
	s.origin = make([]int32, no)
	s.idOfObs = make([]int32, no)
	s.keyOfObs = make([]int32, no)
	varNext := make([]int32, no) // observed index -> next distinct variant of the same id
	varHead := make([]int32, s.nExpIDs)
	varTail := make([]int32, s.nExpIDs)
	s.lastObs = make([]int32, s.nExpIDs)
	for d := range varHead {
		varHead[d], varTail[d], s.lastObs[d] = -1, -1, -1
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
		s.o[i] = itemOf(en)
		id := observed.ID(i)
		var d, k int32
		if cur < ne && expected.ID(cur) == id {
			d = s.idOfExp[cur]
			k = -1
			if kc := s.keyOfExp[cur]; keys.lastIdx == kc && keys.lastKey == en.Key {
				k = kc
			}
			cur++
		} else {
			var ok bool
			d, ok = ids.get(id, int32(len(varHead)))
			switch {
			case !ok:
				s.unexpected = append(s.unexpected, int32(i))
				varHead = append(varHead, -1)
				varTail = append(varTail, -1)
				s.lastObs = append(s.lastObs, -1)
			case int(d) < s.nExpIDs:
				cur = int(s.expHead[d]) + 1
			}
			k = -1
		}
		s.idOfObs[i] = d
		i32 := int32(i)
		st := ""
		// Both chains below hold outputs of id d only: comparing values suffices.
		if int(d) < s.nExpIDs {
			for e := s.expHead[d]; e >= 0; e = s.expNext[e] {
				if !consumed[e] && sameValue(&s.e[e], &s.o[i]) {
					consumed[e] = true
					st = StatusOK
					break
				}
			}
		}
		match := int32(-1)
		for v := varHead[d]; v >= 0; v = varNext[v] {
			if sameValue(&s.o[v], &s.o[i]) {
				match = v
				break
			}
		}
		s.origin[i] = i32
		if st == "" && match >= 0 {
			st = StatusDuplicate
			s.origin[i] = match
			res.Duplicates++
		} else {
			if match < 0 { // a new distinct variant of this id
				varNext[i] = -1
				if varTail[d] < 0 {
					varHead[d] = i32
				} else {
					varNext[varTail[d]] = i32
				}
				varTail[d] = i32
			}
			switch {
			case st != "":
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
		if k < 0 {
			k = keys.get(en.Key)
		}
		s.keyOfObs[i] = k
		for int(k) >= len(s.dedByKey) {
			s.dedByKey = append(s.dedByKey, nil)
			s.expByKey = append(s.expByKey, nil)
		}
		if st != StatusDuplicate {
			s.dedByKey[k] = append(s.dedByKey[k], i32)
		}
	}
}

// anyShortfall reports whether the last delivered copy of some expected id
// reflects fewer source tuples than expected.
func (s *state) anyShortfall() bool {
	for d := 0; d < s.nExpIDs; d++ {
		if s.shortfall(int32(d)) > 0 {
			return true
		}
	}
	return false
}

// shortfall is expected n − n of the last delivered copy of id d when both
// are known and positive, else 0 (also 0 for an id never delivered).
func (s *state) shortfall(d int32) int64 {
	if int(d) >= s.nExpIDs || !s.expHasN[d] {
		return 0
	}
	last := s.lastObs[d]
	if last < 0 {
		return 0
	}
	if o := &s.o[last]; o.hasN && o.n < s.expN[d] {
		return s.expN[d] - o.n
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
		if ob := &s.o[start]; !ob.hasT {
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
