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
