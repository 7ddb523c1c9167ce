package classify

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// anomalyKind orders anomalies that fall on the same time and position.
type anomalyKind uint8

const (
	kindMissing anomalyKind = iota
	kindDuplicate
	kindWrong
	kindSpurious
	kindOrder
)

// anomaly is one sentence to be written.
type anomaly struct {
	kind anomalyKind
	pos  int32   // observed index; expected index (missing); key index (order)
	at   int32   // order: first differing position in the key
	grp  int32   // duplicate: index into the copy groups
	t    float64 // sort time (ms) when every output carries a time
	ord  int     // position in delivery order, missing ids after all deliveries
}

// explain writes one sentence per anomaly, in time (or delivery) order,
// capped at MaxExplanations plus a summary of the rest.
func (s *state) explain(res *Result, mk *markIndex) []string {
	no, ne := len(s.status), len(s.idOfExp)
	allT := s.allT
	obsT := func(i int32) float64 {
		if allT {
			return s.obsItem(i).t
		}
		return 0
	}

	keyBad := make([]bool, s.nKeys)
	var list []anomaly
	var groups [][]int32
	groupOf := map[int32]int32{}
	for i, st := range s.status {
		i32 := int32(i)
		switch st {
		case StatusDuplicate:
			o := s.origin[i]
			g, ok := groupOf[o]
			if !ok {
				g = int32(len(groups))
				groupOf[o] = g
				groups = append(groups, []int32{o})
				list = append(list, anomaly{kind: kindDuplicate, pos: i32, grp: g, t: obsT(i32), ord: i})
			}
			groups[g] = append(groups[g], i32)
		case StatusWrong, StatusSpurious:
			keyBad[s.obsKey(i32)] = true
			kind := kindWrong
			if st == StatusSpurious {
				kind = kindSpurious
			}
			list = append(list, anomaly{kind: kind, pos: i32, t: obsT(i32), ord: i})
		}
	}
	for d := 0; d < s.nExpIDs; d++ {
		if s.lastObs[d] >= 0 {
			continue
		}
		e := s.expHead[d]
		for x := e; x >= 0; x = s.expNext[x] {
			keyBad[s.expKey(x)] = true
		}
		t := 0.0
		if allT {
			t = s.expItem(e).t
		}
		list = append(list, anomaly{kind: kindMissing, pos: e, t: t, ord: no + int(e)})
	}
	for k := range s.nKeys {
		if keyBad[k] || s.keyEqual(k) {
			continue
		}
		exp, ded := s.expByKey[k], s.dedByKey[k]
		p := 0
		for p < len(exp) && p < len(ded) && s.sameEO(exp[p], ded[p]) {
			p++
		}
		a := anomaly{kind: kindOrder, pos: int32(k), at: int32(p), ord: no + ne + k}
		switch {
		case p < len(ded):
			a.ord, a.t = int(ded[p]), obsT(ded[p])
		case len(ded) > 0:
			a.ord, a.t = int(ded[len(ded)-1]), obsT(ded[len(ded)-1])
		}
		list = append(list, a)
	}

	slices.SortStableFunc(list, func(a, b anomaly) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.ord, b.ord), cmp.Compare(a.kind, b.kind))
	})

	sets := s.groupAnomalies(list, groups, mk)
	out := make([]string, 0, min(len(sets), MaxExplanations+1))
	for i := 0; i < len(sets) && i < MaxExplanations; i++ {
		if g := sets[i]; len(g.members) == 1 {
			out = append(out, s.sentence(&list[g.members[0]], groups, mk))
		} else {
			out = append(out, s.groupSentence(list, g, groups, mk))
		}
	}
	if restSets := sets[min(len(sets), MaxExplanations):]; len(restSets) > 0 {
		var c [kindOrder + 1]int
		var rest []int
		for _, g := range restSets {
			rest = append(rest, g.members...)
			c[g.kind] += len(g.members)
		}
		var b strings.Builder
		b.WriteString("… and ")
		b.WriteString(strconv.Itoa(len(rest)))
		b.WriteString(" more anomalies (")
		b.WriteString(strconv.Itoa(c[kindMissing]))
		b.WriteString(" missing, ")
		b.WriteString(strconv.Itoa(c[kindDuplicate]))
		b.WriteString(" duplicates, ")
		b.WriteString(strconv.Itoa(c[kindWrong]))
		b.WriteString(" wrong, ")
		b.WriteString(strconv.Itoa(c[kindSpurious]))
		b.WriteString(" spurious")
		if c[kindOrder] > 0 {
			b.WriteString(", ")
			b.WriteString(strconv.Itoa(c[kindOrder]))
			b.WriteString(" out of order")
		}
		b.WriteString(")")
		out = append(out, b.String())
	}
	return out
}

// sentence writes the explanation of one anomaly.
func (s *state) sentence(a *anomaly, groups [][]int32, mk *markIndex) string {
	var b strings.Builder
	switch a.kind {
	case kindMissing:
		e := s.expOut(int(a.pos))
		b.WriteString("output " + short(e.ID) + " never delivered")
		if e.HasT {
			b.WriteString(" (expected at " + seconds(e.T) + " s")
			if rel := mk.relate(e.T); rel != "" {
				b.WriteString(", " + rel)
			}
			b.WriteString(")")
		}
	case kindDuplicate:
		copies := groups[a.grp]
		o := s.obsOut(int(copies[0]))
		b.WriteString("output " + short(o.ID) + " emitted " + times(len(copies)))
		anyT := false
		for _, c := range copies {
			anyT = anyT || s.obsItem(c).hasT
		}
		if anyT {
			b.WriteString(":")
			for j, c := range copies {
				switch {
				case j == 0:
				case j == len(copies)-1:
					b.WriteString(" and")
				default:
					b.WriteString(",")
				}
				if w := s.when(c, mk); w != "" {
					b.WriteString(" " + w)
				} else {
					b.WriteString(" at an unknown time")
				}
			}
		}
	case kindSpurious:
		o := s.obsOut(int(a.pos))
		b.WriteString("output " + short(o.ID) + " was not expected (spurious)")
		if w := s.when(a.pos, mk); w != "" {
			b.WriteString(" " + w)
		}
	case kindWrong:
		s.wrongSentence(&b, a.pos, mk)
	case kindOrder:
		s.orderSentence(&b, a, mk)
	}
	return b.String()
}

// sigDigits is how many significant digits explanations show of a value.
const sigDigits = 4

// rounded is a numeric value text with at most digits significant digits
// ("49.16" for 49.15765249149101); any other text is left as it is.
func rounded(v string, digits int) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return v
	}
	s := strconv.FormatFloat(f, 'g', digits, 64)
	if strings.Contains(s, "e+") && math.Abs(f) < 1<<53 {
		// 12346, not 1.235e+04; up to 2^53, where float64 stops holding
		// every integer (a hash_chain head reads as the integer it is)
		return strconv.FormatFloat(math.Round(f), 'f', -1, 64)
	}
	return s
}

// roundedPair rounds an observed and an expected value to sigDigits
// significant digits, or to as many more as it takes to tell them apart.
func roundedPair(got, want string) (string, string) {
	for d := sigDigits; d < 17; d++ {
		if g, w := rounded(got, d), rounded(want, d); g != w {
			return g, w
		}
	}
	return got, want
}

// wrongSentence explains a delivery of an expected id with another value or
// lineage count than expected.
func (s *state) wrongSentence(b *strings.Builder, i int32, mk *markIndex) {
	o := s.obsOut(int(i))
	d := s.idOfObs[i]
	e := s.expOut(int(s.expHead[d]))
	w := s.when(i, mk)
	valueDiffers := s.obsItem(i).val != s.expItem(s.expHead[d]).val
	expN, expHasN := s.expN(d)
	nDiffers := o.HasN && expHasN && o.N != expN
	b.WriteString("output " + short(o.ID) + " delivered")
	got, want := roundedPair(o.Value, e.Value)
	got, want = short(got), short(want)
	switch {
	case valueDiffers && !nDiffers:
		b.WriteString(" with value " + got + " instead of " + want + roundingOnly(o.Value, e.Value))
		if w != "" {
			b.WriteString(" " + w)
		}
		return
	case valueDiffers:
		b.WriteString(" with value " + got + " instead of " + want + " and " +
			strconv.FormatInt(o.N, 10) + " source tuples instead of " + strconv.FormatInt(expN, 10))
		if w != "" {
			b.WriteString(" " + w)
		}
	case nDiffers:
		if w != "" {
			b.WriteString(" " + w)
		}
		b.WriteString(" with " + strconv.FormatInt(o.N, 10) + " source tuples instead of " + strconv.FormatInt(expN, 10))
	default:
		if w != "" {
			b.WriteString(" " + w)
		}
		b.WriteString(" with value " + short(rounded(o.Value, sigDigits)))
		if o.HasN {
			b.WriteString(" and " + strconv.FormatInt(o.N, 10) + " source tuples")
		}
		b.WriteString(", which matches no remaining expected output of that id")
		return
	}
	if sf := s.shortfall(d); sf > 0 && s.origin[s.lastObs[d]] == i {
		b.WriteString(" (" + strconv.FormatInt(sf, 10) + " inputs lost)")
	}
}

// roundingLimit is the relative difference below which two values are
// called a floating-point rounding difference.
const roundingLimit = 1e-9

// roundingOnly names the relative error of got against want when it is
// small enough to be floating-point rounding (the same inputs combined in
// another order), e.g. " (relative error 1.3e-16: floating-point
// rounding)"; "" otherwise.
func roundingOnly(got, want string) string {
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil || w == 0 || math.IsInf(g, 0) || math.IsInf(w, 0) {
		return ""
	}
	rel := math.Abs(g-w) / math.Abs(w)
	if rel >= roundingLimit || rel == 0 {
		return ""
	}
	return " (relative error " + strconv.FormatFloat(rel, 'e', 1, 64) + ": floating-point rounding)"
}

// orderSentence explains a key whose outputs are all correct but delivered
// in another order than in the failure-free run.
func (s *state) orderSentence(b *strings.Builder, a *anomaly, mk *markIndex) {
	k := int(a.pos)
	group := "the output"
	if name := s.keyName(k); name != "" {
		group = "key " + name
	}
	exp, ded := s.expByKey[k], s.dedByKey[k]
	p := int(a.at)
	switch {
	case p < len(ded) && p < len(exp):
		o := s.obsOut(int(ded[p]))
		b.WriteString("output " + short(o.ID) + " delivered")
		if w := s.when(ded[p], mk); w != "" {
			b.WriteString(" " + w)
		}
		b.WriteString(" out of order: the failure-free run has output " + short(s.expOut(int(exp[p])).ID) +
			" at position " + strconv.Itoa(p+1) + " of " + group)
	case p < len(ded):
		o := s.obsOut(int(ded[p]))
		b.WriteString("output " + short(o.ID) + " delivered")
		if w := s.when(ded[p], mk); w != "" {
			b.WriteString(" " + w)
		}
		b.WriteString(" after the end of " + group + " in the failure-free run")
	default:
		b.WriteString(group + " ends after " + strconv.Itoa(len(ded)) + " outputs, before output " +
			short(s.expOut(int(exp[p])).ID) + " at position " + strconv.Itoa(p+1) + " of the failure-free run")
	}
}

// times spells a copy count: "twice", "3 times".
func times(n int) string {
	if n == 2 {
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// seconds formats a time in ms as seconds with two decimals.
func seconds(ms float64) string {
	return strconv.FormatFloat(ms/1000, 'f', 2, 64)
}

// when phrases the delivery time of observed output i with its context,
// e.g. "at 9.72 s during the replay from upstream A"; "" when the time is
// unknown.
func (s *state) when(i int32, mk *markIndex) string {
	o := s.obsItem(i)
	if !o.hasT {
		return ""
	}
	w := "at " + seconds(o.t) + " s"
	if rel := mk.relate(o.t); rel != "" {
		w += " " + rel
	}
	return w
}

// markIndex relates times to the marks of a run.
type markIndex struct {
	marks []Mark
}

func newMarkIndex(marks []Mark) *markIndex {
	return &markIndex{marks: marks}
}

// interval reports whether m spans a time interval (rather than a point).
func interval(m *Mark) bool { return m.Until > m.At }

// relate phrases t relative to the marks: "during L" inside an interval
// mark (the latest-starting one), else "after L at X s" for the nearest
// preceding point mark, else "after L at X–Y s" for the latest interval
// that ended before t, else "before L at X s" for the first mark. Ties go to
// the mark given first. "" when there are no marks.
func (mk *markIndex) relate(t float64) string {
	var inside, point, ended, first *Mark
	for i := range mk.marks {
		m := &mk.marks[i]
		if first == nil || m.At < first.At {
			first = m
		}
		switch {
		case interval(m) && m.At <= t && t <= m.Until:
			if inside == nil || m.At > inside.At {
				inside = m
			}
		case interval(m) && m.Until < t:
			if ended == nil || m.Until > ended.Until {
				ended = m
			}
		case !interval(m) && m.At <= t:
			if point == nil || m.At > point.At {
				point = m
			}
		}
	}
	switch {
	case inside != nil:
		return "during " + inside.Label
	case point != nil:
		return "after " + point.Label + " at " + seconds(point.At) + " s"
	case ended != nil:
		return "after " + ended.Label + " at " + seconds(ended.At) + "–" + seconds(ended.Until) + " s"
	case first != nil:
		return "before " + first.Label + " at " + seconds(first.At) + " s"
	}
	return ""
}

// MaxShown bounds how much of an id or a value a sentence quotes, in bytes.
const MaxShown = 80

// short is s, or its first MaxShown bytes (cut on a character boundary)
// followed by "…" and the full size: an explanation stays one readable
// line whatever the log holds.
func short(s string) string {
	if len(s) <= MaxShown {
		return s
	}
	cut := MaxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
